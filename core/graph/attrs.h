// Attributes of a node: a small ordered map of named values, comparable and hashable so that
// common subexpressions can be merged.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace kb {

struct Subgraph;
using GraphRef = std::shared_ptr<const Subgraph>;

using AttrValue =
    std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>, GraphRef>;

class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<std::string, AttrValue>> init) : items_(init) {}

  Attrs& set(const std::string& key, AttrValue v);
  bool has(const std::string& key) const { return find(key) != nullptr; }
  int64_t i(const std::string& key) const;
  int64_t i(const std::string& key, int64_t fallback) const;
  double f(const std::string& key) const;
  double f(const std::string& key, double fallback) const;
  const std::string& s(const std::string& key) const;
  const std::vector<int64_t>& ints(const std::string& key) const;
  const std::vector<double>& floats(const std::string& key) const;
  const GraphRef& graph(const std::string& key) const;

  bool operator==(const Attrs& o) const { return items_ == o.items_; }
  size_t hash() const;
  std::string str() const;

 private:
  const AttrValue* find(const std::string& key) const;
  std::vector<std::pair<std::string, AttrValue>> items_;
};

}  // namespace kb
