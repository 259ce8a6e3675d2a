// The cuDNN helpers of core/cuda/cudnn.cuh.
#include "core/cuda/cudnn.cuh"

namespace kb::cuda {

void check_dnn(cudnnStatus_t s, const char* what) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  bool no_memory = s == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED ||
                   s == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
  fail(no_memory ? Status::out_of_memory : Status::device, "cudnn: ", what, ": ",
       cudnnGetErrorString(s));
}

DnnHandle handle() {
  static std::recursive_mutex mu;
  std::unique_lock<std::recursive_mutex> lock(mu);
  cudnnHandle_t h = library_handle<cudnnHandle_t>(
      [](cudnnHandle_t* p) { return cudnnCreate(p) == CUDNN_STATUS_SUCCESS; }, "cudnnCreate");
  check_dnn(cudnnSetStream(h, stream()), "set stream");
  return {std::move(lock), h};
}

NdDesc nd_desc(const Dims& d, bool channels_first) {
  size_t nsp = d.size() - 2;
  Dims logical{d[0], d[channel_axis(channels_first, nsp)]};
  for (size_t i = 0; i < nsp; ++i) logical.push_back(d[spatial_axis(channels_first, i)]);
  // Memory strides of the stored layout, mapped to the logical order.
  Dims mem(d.size());
  int64_t acc = 1;
  for (size_t i = d.size(); i-- > 0;) mem[i] = acc, acc *= d[i];
  Dims st{mem[0], mem[channel_axis(channels_first, nsp)]};
  for (size_t i = 0; i < nsp; ++i) st.push_back(mem[spatial_axis(channels_first, i)]);
  if (nsp == 1) {  // (N, C, W) -> (N, C, 1, W)
    logical.insert(logical.begin() + 2, 1);
    st.insert(st.begin() + 2, st[2] * logical[3]);
  }
  NdDesc r;
  for (auto v : logical) r.dims.push_back(int(v));
  for (auto v : st) r.strides.push_back(int(v));
  return r;
}

const void* dnn_operand(const void* data, size_t bytes, std::shared_ptr<void>& keep) {
  if (dnn_aligned(data)) return data;
  keep = scratch(bytes);
  copy_on_device(keep.get(), data, bytes);
  return keep.get();
}

}  // namespace kb::cuda
