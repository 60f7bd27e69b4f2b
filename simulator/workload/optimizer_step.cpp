#include "simulator/workload/optimizer_step.hpp"

#include "simulator/workload/modules/op_factory.hpp"

namespace weft {
namespace {

constexpr Bytes kFp32 = 4;

// A memory-bound pass of the step over `parameters` moving `bytes_per_parameter` each, 1 FLOP a
// parameter. Every kernel of the step is of class optimizer: reports and calibration count the
// step as one.
OpWork parameter_pass(std::int64_t parameters, Bytes bytes_per_parameter) {
  return memory_bound_work(OpClass::optimizer, parameters * bytes_per_parameter, static_cast<double>(parameters),
                           Dtype::fp32, {parameters});
}

// A pass that only reads (a norm) or only writes (zeros) `bytes`. No shape: what runs it live
// moves the same bytes as its generic memory-bound kernel, half read and half written.
OpWork one_way_pass(Bytes bytes, double flops) {
  return memory_bound_work(OpClass::optimizer, bytes, flops, Dtype::fp32);
}

}  // namespace

std::vector<OptimizerKernel> optimizer_step_kernels(const SoftwareStack& stack, Dtype training,
                                                    const OptimizerStepSize& size) {
  const std::int64_t shard = size.shard_parameters;
  // Both optimizers read the fp32 gradients once for their norm.
  const OpWork gradient_norm = one_way_pass(shard * kFp32, 2.0 * static_cast<double>(shard));
  std::vector<OptimizerKernel> kernels;
  switch (stack.optimizer_step) {
    case OptimizerStepKernels::megatron:
      // MixedPrecisionOptimizer.step (NVIDIA/Megatron-LM megatron/core/optimizer/optimizer.py):
      // 16-bit gradients are cast to the fp32 main gradients (`.float()`, nothing when they are
      // fp32 already); fp16's loss scale is undone in place with the inf check
      // (_amp_foreach_non_finite_check_and_unscale_); the gradient norm reads them
      // (multi_tensor_l2norm); Adam steps; the fp32 main parameters are copied back to the
      // 16-bit ones (multi_tensor_scale by 1). The training loop zeroes the gradient buffers
      // before the next iteration (zero_grad_buffer). The clip's scaling runs only when the norm
      // exceeds the threshold, so it is not counted. Training in fp32 or tf32 (FP32Optimizer) has
      // no 16-bit copy to cast from or to.
      if (stack.gradient_bytes(training) < kFp32) {
        kernels.push_back({"copy gradients to fp32", parameter_pass(shard, stack.gradient_bytes(training) + kFp32)});
      }
      if (training == Dtype::fp16) kernels.push_back({"unscale gradients", parameter_pass(shard, 2 * kFp32)});
      kernels.push_back({"gradient norm", gradient_norm});
      kernels.push_back({"optimizer step", adam_step_work(shard)});
      if (!stack.parameters_are_master(training)) {
        kernels.push_back({"copy parameters", parameter_pass(shard, kFp32 + bytes_per_element(training))});
      }
      kernels.push_back({"zero gradients", one_way_pass(size.gradient_buffer_bytes, 0.0)});
      break;
    case OptimizerStepKernels::pytorch:
      // torch.nn.utils.clip_grad_norm_: the norm reads the fp32 gradients, then every gradient is
      // multiplied by the clamped coefficient, whether or not it clips (no host synchronization);
      // then AdamW. Gradients are set to None, not zeroed.
      kernels.push_back({"gradient norm", gradient_norm});
      kernels.push_back({"clip gradients", parameter_pass(shard, 2 * kFp32)});
      kernels.push_back({"optimizer step", adam_step_work(shard)});
      break;
  }
  return kernels;
}

}  // namespace weft
