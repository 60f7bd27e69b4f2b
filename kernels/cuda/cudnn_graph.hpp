#pragma once

// Building blocks of cuDNN's graph (backend) API: owned descriptors, tensors, the primitive
// operations an attention graph is made of, and an execution plan for a graph of them.
#include <cudnn.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace weft::cuda::cudnn {

// Throws naming `what`, cuDNN's status and its last error message.
void check(cudnnStatus_t status, const char* what);

// A backend descriptor, destroyed with its last copy.
class Descriptor {
 public:
  Descriptor() = default;
  explicit Descriptor(cudnnBackendDescriptorType_t type);

  cudnnBackendDescriptor_t get() const { return handle_.get(); }
  template <class T>
  Descriptor& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, const T& value) {
    return set(name, type, 1, &value);
  }
  Descriptor& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, std::int64_t count,
                  const void* values);
  Descriptor& set(cudnnBackendAttributeName_t name, const Descriptor& value);
  Descriptor& finalize(const char* what);

 private:
  std::shared_ptr<std::remove_pointer_t<cudnnBackendDescriptor_t>> handle_;
};

using Dims = std::array<std::int64_t, 4>;

struct TensorSpec {
  std::int64_t uid = 0;
  Dims dims{};
  Dims strides{};
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  bool is_virtual = false;
  bool by_value = false;  // a host scalar passed with each execution
};

Descriptor tensor(const TensorSpec& spec);
// Packed row-major strides of `dims`.
Dims packed(const Dims& dims);

// A pointwise op: y = mode(x[, b[, t]]), computed in `precision`; `axis` for GEN_INDEX.
Descriptor pointwise(cudnnPointwiseMode_t mode, const Descriptor& x, const Descriptor* b, const Descriptor* t,
                     const Descriptor& y, cudnnDataType_t precision = CUDNN_DATA_FLOAT, std::int64_t axis = -1);
Descriptor matmul(const Descriptor& a, const Descriptor& b, const Descriptor& c);
// Reduces x into y (summing or taking the largest): along the axes where y's dimension is 1, and
// over groups of x's heads where y has fewer (grouped-query attention's dK and dV).
Descriptor reduction(cudnnReduceTensorOp_t op, const Descriptor& x, const Descriptor& y);
Descriptor reshape(const Descriptor& x, const Descriptor& y);

// The fastest execution plan cuDNN's heuristics offer for a graph of `ops` that this device runs.
struct Plan {
  Descriptor plan;
  std::int64_t workspace_bytes = 0;
};
Plan build_plan(cudnnHandle_t handle, const std::vector<Descriptor>& ops, const char* what);

// Runs `plan` with the tensors of `uids` at `pointers` (host pointers for by-value scalars).
void execute(cudnnHandle_t handle, const Plan& plan, const std::vector<std::int64_t>& uids,
             const std::vector<void*>& pointers, void* workspace, const char* what);

}  // namespace weft::cuda::cudnn
