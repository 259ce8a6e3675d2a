// Attributes of a node: a small ordered map of named values, comparable and hashable so that
// common subexpressions can be merged.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/graph/attr_keys.h"

namespace kb {

struct Subgraph;
using GraphRef = std::shared_ptr<const Subgraph>;

using AttrValue =
    std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>, GraphRef>;

class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<AttrKey, AttrValue>> init);

  Attrs& set(AttrKey key, AttrValue v);
  bool has(AttrKey key) const { return find(key.c_str()) != nullptr; }
  int64_t i(AttrKey key) const;
  int64_t i(AttrKey key, int64_t fallback) const;
  double f(AttrKey key) const;
  double f(AttrKey key, double fallback) const;
  const std::string& s(AttrKey key) const;
  const std::vector<int64_t>& ints(AttrKey key) const;
  const std::vector<double>& floats(AttrKey key) const;
  const GraphRef& graph(AttrKey key) const;

  bool operator==(const Attrs& o) const { return items_ == o.items_; }
  size_t hash() const;
  std::string str() const;

 private:
  const AttrValue* find(const std::string& key) const;
  std::vector<std::pair<std::string, AttrValue>> items_;
};

}  // namespace kb
