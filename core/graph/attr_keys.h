// The keys of node attributes (core/graph/attrs.h), one constant each (attr::axes): Attrs takes
// only these, so a misspelt key fails to compile instead of failing when a graph is built.
#pragma once

namespace kb {

class AttrKey {
 public:
  constexpr explicit AttrKey(const char* text) : text_(text) {}
  constexpr const char* c_str() const { return text_; }

 private:
  const char* text_;
};

// clang-format off
#define KB_ATTR_KEYS(X) \
  X(a, "a") X(a_shape, "a_shape") X(adjoint_a, "adjoint_a") X(async, "async") \
  X(average, "average") X(axes, "axes") X(axis, "axis") X(b, "b") X(beam_width, "beam_width") \
  X(begin, "begin") X(begin_mask, "begin_mask") X(body, "body") X(causal, "causal") \
  X(center, "center") X(default_, "default") X(dilation, "dilation") X(dims, "dims") \
  X(dist, "dist") X(dtype, "dtype") X(end, "end") X(end_mask, "end_mask") X(epsilon, "epsilon") \
  X(factors, "factors") X(greedy, "greedy") X(groups, "groups") X(index, "index") X(k, "k") \
  X(keep, "keep") X(keepdims, "keepdims") X(layout, "layout") X(message, "message") \
  X(mode, "mode") X(multiples, "multiples") X(n_aux, "n_aux") X(n_out, "n_out") \
  X(n_seq, "n_seq") X(n_state, "n_state") X(offset, "offset") X(pad_after, "pad_after") \
  X(pad_before, "pad_before") X(perm, "perm") X(program, "program") X(registers, "registers") \
  X(relu, "relu") X(relu_max, "relu_max") X(result, "result") X(reverse, "reverse") \
  X(root, "root") X(root_only, "root_only") X(rounded, "rounded") X(same, "same") \
  X(seed, "seed") X(shape, "shape") X(shrink_mask, "shrink_mask") X(size, "size") \
  X(start, "start") X(strides, "strides") X(top_paths, "top_paths") \
  X(transpose_a, "transpose_a") X(transpose_b, "transpose_b") \
  X(value, "value") X(who, "who") X(window, "window") X(x_dims, "x_dims")
// clang-format on

namespace attr {
#define KB_DECLARE_ATTR_KEY(name, text) inline constexpr AttrKey name{text};
KB_ATTR_KEYS(KB_DECLARE_ATTR_KEY)
#undef KB_DECLARE_ATTR_KEY
}  // namespace attr

}  // namespace kb
