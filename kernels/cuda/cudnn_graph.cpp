#include "kernels/cuda/cudnn_graph.hpp"

#include <stdexcept>
#include <string>

namespace weft::cuda::cudnn {

void check(cudnnStatus_t status, const char* what) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  std::array<char, 512> detail{};
  cudnnGetLastErrorString(detail.data(), detail.size());
  throw std::runtime_error(std::string(what) + " failed: " + cudnnGetErrorString(status) +
                           (detail[0] != '\0' ? std::string(" (") + detail.data() + ")" : std::string()));
}

Descriptor::Descriptor(cudnnBackendDescriptorType_t type) {
  cudnnBackendDescriptor_t raw = nullptr;
  check(cudnnBackendCreateDescriptor(type, &raw), "cudnnBackendCreateDescriptor");
  handle_.reset(raw, [](cudnnBackendDescriptor_t d) { cudnnBackendDestroyDescriptor(d); });
}

Descriptor& Descriptor::set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, std::int64_t count,
                            const void* values) {
  check(cudnnBackendSetAttribute(get(), name, type, count, values), "cudnnBackendSetAttribute");
  return *this;
}

Descriptor& Descriptor::set(cudnnBackendAttributeName_t name, const Descriptor& value) {
  const cudnnBackendDescriptor_t raw = value.get();
  return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw);
}

Descriptor& Descriptor::finalize(const char* what) {
  check(cudnnBackendFinalize(get()), what);
  return *this;
}

Dims packed(const Dims& dims) {
  Dims strides{};
  std::int64_t stride = 1;
  for (int i = 3; i >= 0; --i) {
    strides[static_cast<std::size_t>(i)] = stride;
    stride *= dims[static_cast<std::size_t>(i)];
  }
  return strides;
}

Descriptor tensor(const TensorSpec& spec) {
  Descriptor d(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const std::int64_t alignment = 16;
  d.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, spec.uid)
      .set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, spec.type)
      .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, alignment)
      .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, spec.dims.data())
      .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, spec.strides.data());
  if (spec.is_virtual) d.set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, true);
  if (spec.by_value) d.set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, true);
  return d.finalize("cuDNN tensor descriptor");
}

Descriptor pointwise(cudnnPointwiseMode_t mode, const Descriptor& x, const Descriptor* b, const Descriptor* t,
                     const Descriptor& y, cudnnDataType_t precision, std::int64_t axis) {
  Descriptor math(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  math.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, mode)
      .set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, precision);
  if (axis >= 0) math.set(CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, axis);
  math.finalize("cuDNN pointwise descriptor");
  Descriptor op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  const float one = 1.0f;
  op.set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, math).set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
  if (b != nullptr) op.set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
  if (t != nullptr) op.set(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, *t);
  op.set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y)
      .set(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, one)
      .set(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, one);
  return op.finalize("cuDNN pointwise operation");
}

Descriptor matmul(const Descriptor& a, const Descriptor& b, const Descriptor& c) {
  Descriptor math(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
  math.set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT).finalize("cuDNN matmul descriptor");
  Descriptor op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
  op.set(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a)
      .set(CUDNN_ATTR_OPERATION_MATMUL_BDESC, b)
      .set(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c)
      .set(CUDNN_ATTR_OPERATION_MATMUL_DESC, math);
  return op.finalize("cuDNN matmul operation");
}

Descriptor reduction(cudnnReduceTensorOp_t reduce, const Descriptor& x, const Descriptor& y) {
  Descriptor math(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
  math.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, reduce)
      .set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
      .set(CUDNN_ATTR_REDUCTION_IS_DETERMINISTIC, CUDNN_TYPE_BOOLEAN, false)
      .finalize("cuDNN reduction descriptor");
  Descriptor op(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
  op.set(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x)
      .set(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y)
      .set(CUDNN_ATTR_OPERATION_REDUCTION_DESC, math);
  return op.finalize("cuDNN reduction operation");
}

Descriptor reshape(const Descriptor& x, const Descriptor& y) {
  Descriptor op(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
  op.set(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, x).set(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, y);
  return op.finalize("cuDNN reshape operation");
}

Plan build_plan(cudnnHandle_t handle, const std::vector<Descriptor>& ops, const char* what) {
  std::vector<cudnnBackendDescriptor_t> raw;
  for (const Descriptor& op : ops) raw.push_back(op.get());
  Descriptor graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, handle)
      .set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<std::int64_t>(raw.size()),
           raw.data())
      .finalize(what);
  Descriptor heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  heuristics.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph)
      .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, CUDNN_HEUR_MODE_A)
      .finalize("cuDNN engine heuristics");
  std::int64_t count = 0;
  check(cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                 &count, nullptr),
        "cuDNN engine heuristics (count)");
  std::vector<Descriptor> configs;
  std::vector<cudnnBackendDescriptor_t> config_handles;
  for (std::int64_t i = 0; i < count; ++i) {
    configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    config_handles.push_back(configs.back().get());
  }
  std::int64_t returned = 0;
  if (count > 0) {
    check(cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                   count, &returned, config_handles.data()),
          "cuDNN engine heuristics (results)");
  }
  std::string last_error = "cuDNN's heuristics offered no engine";
  for (std::int64_t i = 0; i < returned; ++i) {
    try {
      Plan result{Descriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR), 0};
      result.plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, handle)
          .set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, configs[static_cast<std::size_t>(i)])
          .finalize("cuDNN execution plan");
      check(cudnnBackendGetAttribute(result.plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                     &returned, &result.workspace_bytes),
            "cuDNN plan workspace size");
      return result;
    } catch (const std::runtime_error& e) {
      last_error = e.what();  // this engine cannot run the graph here; try the next one
    }
  }
  throw std::runtime_error(std::string(what) + ": no cuDNN engine runs it (" + last_error + ")");
}

void execute(cudnnHandle_t handle, const Plan& plan, const std::vector<std::int64_t>& uids,
             const std::vector<void*>& pointers, void* workspace, const char* what) {
  Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, static_cast<std::int64_t>(uids.size()), uids.data())
      .set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, static_cast<std::int64_t>(pointers.size()),
           pointers.data())
      .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, workspace)
      .finalize(what);
  check(cudnnBackendExecute(handle, plan.plan.get(), pack.get()), what);
}

}  // namespace weft::cuda::cudnn
