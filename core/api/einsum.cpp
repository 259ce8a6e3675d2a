// einsum (NumPy's and Keras 3's keras.ops.einsum) for one or two operands, as a composition of
// primitives: labels summed where only one operand has them, then one (batched) MatMul over the
// operands permuted and reshaped to (batch, free, contracted); gradients come from those.
#include <algorithm>
#include <map>

#include "core/api/api.h"
#include "core/ops/build.h"
#include "core/util/error.h"

namespace kb::api {
namespace {

constexpr char kWho[] = "einsum";

// Labels are letters; the dims an ellipsis stands for get labels of their own, numbered from
// the right (bytes past ASCII, which no equation can write).
char ellipsis_label(int64_t from_right) { return char(0x80 + from_right); }

bool is_label(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// One operand's subscripts with its ellipsis expanded for its rank.
std::string expand(const std::string& subscripts, int64_t rank, int64_t& ellipsis_dims) {
  std::string labels;
  size_t dots = subscripts.find("...");
  check(dots == std::string::npos || subscripts.find("...", dots + 3) == std::string::npos,
        Status::invalid_argument, kWho, ": '", subscripts, "' has two ellipses");
  int64_t named = 0;
  for (size_t i = 0; i < subscripts.size(); ++i) {
    if (dots != std::string::npos && i >= dots && i < dots + 3) continue;
    check(is_label(subscripts[i]), Status::invalid_argument, kWho, ": '", subscripts[i],
          "' is not a subscript (letters and one '...')");
    ++named;
  }
  if (dots == std::string::npos) {
    check(named == rank, Status::shape, kWho, ": '", subscripts, "' names ", named,
          " dims of an operand of rank ", rank);
    ellipsis_dims = 0;
    return subscripts;
  }
  check(named <= rank, Status::shape, kWho, ": '", subscripts, "' names ", named,
        " dims of an operand of rank ", rank);
  ellipsis_dims = rank - named;
  labels = subscripts.substr(0, dots);
  for (int64_t k = ellipsis_dims - 1; k >= 0; --k) labels += ellipsis_label(k);
  labels += subscripts.substr(dots + 3);
  return labels;
}

struct Operand {
  NodePtr x;
  std::string labels;
};

int64_t dim_of(const Operand& o, char label) { return o.x->shape().dims[o.labels.find(label)]; }

// The product of the dims of `labels` of o, as a one-entry int64 vector (known now or when
// the function runs), and its value now (-1: unknown).
std::pair<NodePtr, int64_t> extent(const Operand& o, const std::string& labels) {
  int64_t known = 1;
  std::vector<int64_t> axes;
  for (char l : labels) {
    size_t axis = o.labels.find(l);
    axes.push_back(int64_t(axis));
    int64_t d = o.x->shape().dims[axis];
    known = known < 0 || d < 0 ? -1 : known * d;
  }
  if (known >= 0) return {int64_vector({known}), known};
  NodePtr dims = make_node(ops::Gather, {shape_vector(o.x), int64_vector(axes)});
  return {reduce(dims, ReduceMode::prod, {0}, true), -1};
}

// o reshaped so that each group of its labels (in its order) becomes one dim.
NodePtr grouped(const Operand& o, const std::vector<std::string>& groups) {
  bool merges = false;
  for (const auto& g : groups) merges = merges || g.size() != 1;
  if (!merges) return o.x;  // one label a group: nothing to merge
  Tensors parts;
  std::vector<int64_t> known;
  for (const auto& g : groups) {
    auto [part, value] = extent(o, g);
    parts.push_back(part);
    known.push_back(value);
  }
  return reshape_to(o.x, make_node(ops::Concat, parts, {{attr::axis, int64_t(0)}}), known);
}

// o's labels not in `keep` summed out.
Operand summed_to(const Operand& o, const std::string& keep) {
  std::vector<int64_t> axes;
  std::string rest;
  for (size_t i = 0; i < o.labels.size(); ++i) {
    if (keep.find(o.labels[i]) == std::string::npos)
      axes.push_back(int64_t(i));
    else
      rest += o.labels[i];
  }
  if (axes.empty()) return o;
  return {reduce_sum(o.x, axes, false), rest};
}

// o transposed to the order of `labels` (a permutation of its own).
NodePtr ordered(const Operand& o, const std::string& labels) {
  std::vector<int64_t> perm;
  for (char l : labels) perm.push_back(int64_t(o.labels.find(l)));
  return kb::transpose(o.x, perm);
}

}  // namespace

NodePtr einsum(const std::string& equation, const Tensors& operands) {
  check(operands.size() == 1 || operands.size() == 2, Status::not_implemented, kWho,
        ": takes one or two operands, given ", operands.size());
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> subscripts;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    subscripts.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  check(subscripts.size() == operands.size(), Status::invalid_argument, kWho, ": '", equation,
        "' has ", subscripts.size(), " operands' subscripts for ", operands.size(), " operands");
  std::vector<Operand> ops_in;
  int64_t ellipsis = 0;
  std::map<char, int> count;
  for (size_t i = 0; i < operands.size(); ++i) {
    require(operands[i], kWho, "operands");
    check(operands[i]->shape().rank_known, Status::shape, kWho, ": the rank of operand ", i,
          " is unknown");
    int64_t e = 0;
    Operand o{operands[i], expand(subscripts[i], operands[i]->rank(), e)};
    ellipsis = std::max(ellipsis, e);
    for (char l : o.labels) {
      check(std::count(o.labels.begin(), o.labels.end(), l) == 1, Status::not_implemented, kWho,
            ": '", subscripts[i], "' repeats a subscript (a diagonal)");
      ++count[l];
    }
    ops_in.push_back(o);
  }
  std::string out;
  if (arrow == std::string::npos) {  // NumPy's implicit output: the ellipsis, then labels once
    for (int64_t k = ellipsis - 1; k >= 0; --k) out += ellipsis_label(k);
    for (const auto& [l, n] : count)
      if (n == 1 && is_label(l)) out += l;
  } else {
    std::string rhs = eq.substr(arrow + 2);
    size_t dots = rhs.find("...");
    for (size_t i = 0; i < rhs.size(); ++i) {
      if (dots != std::string::npos && i == dots) {
        for (int64_t k = ellipsis - 1; k >= 0; --k) out += ellipsis_label(k);
        i += 2;
        continue;
      }
      check(is_label(rhs[i]) && count.count(rhs[i]), Status::invalid_argument, kWho, ": '", rhs[i],
            "' of the output is not a subscript of an operand");
      check(out.find(rhs[i]) == std::string::npos, Status::invalid_argument, kWho, ": '", rhs[i],
            "' appears twice in the output");
      out += rhs[i];
    }
    if (dots == std::string::npos)
      for (int64_t k = 0; k < ellipsis; ++k)
        check(out.find(ellipsis_label(k)) != std::string::npos, Status::invalid_argument, kWho,
              ": the output leaves out the dims of the operands' ellipsis");
  }
  if (ops_in.size() == 1) {
    Operand a = summed_to(ops_in[0], out);
    return ordered(a, out);
  }
  // Labels only one operand has and the output drops are summed first.
  Operand a = summed_to(ops_in[0], out + ops_in[1].labels);
  Operand b = summed_to(ops_in[1], out + a.labels);
  check(a.x->dtype() == b.x->dtype(), Status::dtype, kWho, ": the operands' dtypes differ (",
        dtype_name(a.x->dtype()), " and ", dtype_name(b.x->dtype()), ")");
  std::string batch, contracted, a_free, b_free;
  for (char l : a.labels) {
    bool in_b = b.labels.find(l) != std::string::npos;
    bool in_out = out.find(l) != std::string::npos;
    if (in_b) {
      int64_t da = dim_of(a, l), db = dim_of(b, l);
      check(da < 0 || db < 0 || da == db, Status::shape, kWho, ": subscript '", l, "' is dim ", da,
            " of the first operand and ", db, " of the second");
    }
    (in_b ? (in_out ? batch : contracted) : a_free) += l;
  }
  for (char l : b.labels)
    if (a.labels.find(l) == std::string::npos) b_free += l;
  // (batch, a_free, contracted) x (batch, contracted, b_free) -> (batch, a_free, b_free)
  Operand at{ordered(a, batch + a_free + contracted), batch + a_free + contracted};
  Operand bt{ordered(b, batch + contracted + b_free), batch + contracted + b_free};
  std::vector<std::string> a_groups{a_free, contracted}, b_groups{contracted, b_free};
  if (!batch.empty()) {
    a_groups.insert(a_groups.begin(), batch);
    b_groups.insert(b_groups.begin(), batch);
  }
  // An empty group is a dim of 1 (an outer product contracts nothing).
  NodePtr a3 = grouped(at, a_groups), b3 = grouped(bt, b_groups);
  NodePtr product = matmul(a3, b3, false, false);
  // Back to one dim per label, then to the output's order.
  std::string labels = batch + a_free + b_free;
  Tensors parts;
  std::vector<int64_t> known;
  for (char l : labels) {
    const Operand& src = a.labels.find(l) != std::string::npos ? at : bt;
    auto [part, value] = extent(src, std::string(1, l));
    parts.push_back(part);
    known.push_back(value);
  }
  bool one_each = batch.size() <= 1 && a_free.size() == 1 && b_free.size() == 1;
  NodePtr split =
      one_each
          ? product
          : reshape_to(product, make_node(ops::Concat, parts, {{attr::axis, int64_t(0)}}), known);
  return ordered({split, labels}, out);
}

}  // namespace kb::api
