#include "core/graph/attrs.h"

#include <functional>
#include <sstream>

#include "core/util/error.h"

namespace kb {

Attrs::Attrs(std::initializer_list<std::pair<AttrKey, AttrValue>> init) {
  items_.reserve(init.size());
  for (const auto& [key, value] : init) {
    // The value copied as its alternative, then moved in: GCC 12's variant copy constructor
    // destroys a value it never built when the copy runs out of memory.
    AttrValue copy = std::visit([](const auto& v) { return AttrValue(v); }, value);
    items_.emplace_back(key.c_str(), std::move(copy));
  }
}

Attrs& Attrs::set(AttrKey key, AttrValue v) {
  for (auto& kv : items_)
    if (kv.first == key.c_str()) {
      kv.second = std::move(v);
      return *this;
    }
  items_.emplace_back(key.c_str(), std::move(v));
  return *this;
}

const AttrValue* Attrs::find(const std::string& key) const {
  for (auto& kv : items_)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

template <class T>
static const T& get_as(const AttrValue* v, const std::string& key) {
  if (!v) fail(Status::internal, "missing attribute '", key, "'");
  const T* p = std::get_if<T>(v);
  if (!p) fail(Status::internal, "attribute '", key, "' has the wrong type");
  return *p;
}

int64_t Attrs::i(AttrKey key) const { return get_as<int64_t>(find(key.c_str()), key.c_str()); }
int64_t Attrs::i(AttrKey key, int64_t fallback) const { return has(key) ? i(key) : fallback; }
double Attrs::f(AttrKey key) const { return get_as<double>(find(key.c_str()), key.c_str()); }
double Attrs::f(AttrKey key, double fallback) const { return has(key) ? f(key) : fallback; }
const std::string& Attrs::s(AttrKey key) const {
  return get_as<std::string>(find(key.c_str()), key.c_str());
}
const std::vector<int64_t>& Attrs::ints(AttrKey key) const {
  return get_as<std::vector<int64_t>>(find(key.c_str()), key.c_str());
}
const std::vector<double>& Attrs::floats(AttrKey key) const {
  return get_as<std::vector<double>>(find(key.c_str()), key.c_str());
}
const GraphRef& Attrs::graph(AttrKey key) const {
  return get_as<GraphRef>(find(key.c_str()), key.c_str());
}

size_t Attrs::hash() const {
  size_t h = items_.size();
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  for (auto& [k, v] : items_) {
    mix(std::hash<std::string>()(k));
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::vector<int64_t>> ||
                        std::is_same_v<T, std::vector<double>>) {
            for (auto e : x) mix(std::hash<typename T::value_type>()(e));
          } else if constexpr (std::is_same_v<T, GraphRef>) {
            mix(std::hash<const void*>()(x.get()));
          } else {
            mix(std::hash<T>()(x));
          }
        },
        v);
  }
  return h;
}

std::string Attrs::str() const {
  std::ostringstream os;
  for (auto& [k, v] : items_) {
    os << k << "=";
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::vector<int64_t>> ||
                        std::is_same_v<T, std::vector<double>>) {
            os << "[";
            for (auto e : x) os << e << ",";
            os << "]";
          } else if constexpr (std::is_same_v<T, GraphRef>) {
            os << "<graph " << static_cast<const void*>(x.get()) << ">";
          } else {
            os << x;
          }
        },
        v);
    os << " ";
  }
  return os.str();
}

}  // namespace kb
