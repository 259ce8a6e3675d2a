// A bucket's all-reduce is two steps (core/compile/bucket_collectives.cpp): its AllReduce starts
// the collective and its AllReduceWait completes it. A device's two kernels share the collective's
// state through this table, from the AllReduce's factory to its wait's, made next: by the
// AllReduce's node, which the wait's node reads.
#pragma once
#include <map>
#include <memory>
#include <mutex>

#include "core/graph/node.h"
#include "core/util/error.h"

namespace kb {

template <class State>
class StartedCollectives {
 public:
  // The state of the collective `start` begins (its AllReduce's factory).
  std::shared_ptr<State> begin(const Node& start) {
    auto s = std::make_shared<State>();
    std::lock_guard<std::mutex> lock(mu_);
    by_node_[&start] = s;
    return s;
  }
  // The same state, for the AllReduceWait `wait` of that collective (its factory).
  std::shared_ptr<State> take(const Node& wait, const char* device) {
    const Node* start = wait.inputs[0].get();
    std::lock_guard<std::mutex> lock(mu_);
    auto it = by_node_.find(start);
    check(it != by_node_.end(), Status::internal, "AllReduceWait: its all-reduce was not started ",
          device);
    std::shared_ptr<State> s = std::move(it->second);
    by_node_.erase(it);
    return s;
  }

 private:
  std::mutex mu_;
  std::map<const Node*, std::shared_ptr<State>> by_node_;
};

}  // namespace kb
