// A node of the graph: one primitive application producing one value. Tensors handed to users are
// shared pointers to nodes; building a node computes nothing.
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "core/graph/attrs.h"
#include "core/graph/op_name.h"
#include "core/graph/buffer.h"
#include "core/graph/dtype.h"
#include "core/graph/shape.h"

namespace kb {

struct TensorType {
  TensorType() = default;
  TensorType(DType t, Shape s, std::vector<TensorType> p = {})
      : dtype(t), shape(std::move(s)), parts(std::move(p)) {}

  DType dtype = DType::f32;
  Shape shape;
  // A node with several results (a Loop) has a tuple type: its parts are the results' types,
  // taken apart by TupleGet nodes.
  std::vector<TensorType> parts;
};

struct OpDef;
struct Node;
using NodePtr = std::shared_ptr<Node>;

struct Node {
  ~Node();

  const OpDef* op = nullptr;
  std::vector<NodePtr> inputs;
  Attrs attrs;
  TensorType type;
  std::string name;
  uint64_t id = 0;  // unique over the process, increasing in creation order

  // Leaves: the data of a constant, the current value of a variable (replaced by updates, so
  // a buffer handed out earlier keeps its old contents).
  std::shared_ptr<Buffer> value;

  // Keras bookkeeping, settable through the C ABI.
  bool keras_tensor = false;
  bool uses_learning_phase = false;

  // Stateful kernels (the random ops): how many times this node has run in any compiled
  // function. The random kernels draw with (seed, this counter), so every call draws new numbers
  // and the same seed gives the same sequence.
  mutable std::atomic<uint64_t> runs{0};

  DType dtype() const { return type.dtype; }
  const Shape& shape() const { return type.shape; }
  int64_t rank() const { return type.shape.rank(); }
  bool is(OpName op_name) const;
};

// Releasing the last handle of a long chain of nodes would recurse once per node through the
// inputs' destructors and overflow a thread's stack (50k nodes on a 1 MiB stack, the JVM's
// default). The outermost destructor on a thread instead collects the inputs it drops and
// releases them one at a time; destructors run inside that loop only hand their inputs over.
inline Node::~Node() {
  thread_local std::vector<NodePtr>* pending = nullptr;
  if (pending) {
    try {
      for (NodePtr& in : inputs)
        if (in) pending->push_back(std::move(in));
    } catch (...) {
      // Out of memory: the inputs left in `inputs` are released by recursion, as before.
    }
    return;
  }
  std::vector<NodePtr> dropped;
  dropped.swap(inputs);
  pending = &dropped;
  while (!dropped.empty()) {
    NodePtr last = std::move(dropped.back());
    dropped.pop_back();
    last.reset();
  }
  pending = nullptr;
}

}  // namespace kb
