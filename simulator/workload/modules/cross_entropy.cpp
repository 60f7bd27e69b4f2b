#include "simulator/workload/modules/cross_entropy.hpp"

#include "simulator/workload/modules/op_factory.hpp"

namespace weft {

CrossEntropyTraffic cross_entropy_traffic(CrossEntropyKernels kernels, Bytes logit_bytes) {
  constexpr Bytes kFp32 = 4;
  // Casting the 16-bit logits to fp32 reads them and writes the copy; the gradient's cast back
  // reads fp32 and writes 16 bits. fp32 training casts nothing.
  const bool casts = logit_bytes != kFp32;
  const Bytes cast = casts ? logit_bytes + kFp32 : 0;
  const Bytes read_write = 2 * kFp32;  // an elementwise fp32 kernel in place or out of place
  CrossEntropyTraffic traffic;
  switch (kernels) {
    case CrossEntropyKernels::megatron:
      // Megatron-LM's _VocabParallelCrossEntropy (megatron/core/tensor_parallel/cross_entropy.py;
      // megatron/mpu/cross_entropy.py before 2022 does the same after gpt_model.py's
      // output.float()): cast, max, in-place subtract, exp, sum, in-place divide; the fp32
      // softmax is kept. Backward: multiply by the loss gradient in place, then cast back.
      traffic.forward = cast + kFp32 + read_write + read_write + kFp32 + read_write;
      traffic.backward = read_write + cast;
      traffic.saved = kFp32;
      break;
    case CrossEntropyKernels::pytorch:
      // F.cross_entropy(logits.float()) as torchtitan calls it: cast, then log_softmax (one read
      // and one write: a lower bound, rows longer than shared memory are read once per pass),
      // keeping the fp32 log-probabilities; nll_loss touches one entry per token. Backward:
      // nll_loss_backward fills an fp32 gradient with zeros, log_softmax_backward reads it and
      // the log-probabilities and writes the input gradient, then the cast back.
      traffic.forward = cast + read_write;
      traffic.backward = kFp32 + 3 * kFp32 + cast;
      traffic.saved = kFp32;
      // The fp32 copy lives while log_softmax runs; nll_loss's gradient and log_softmax's
      // input gradient live together with the log-probabilities before the cast back.
      traffic.forward_workspace = casts ? kFp32 : 0;
      traffic.backward_workspace = 2 * kFp32 - logit_bytes;
      break;
    case CrossEntropyKernels::fused:
      // One kernel each way over the 16-bit logits (flash-attn's CrossEntropyLoss, llm-foundry's
      // default): the forward reads them once for the log-sum-exp, the backward reads them
      // again and writes the gradient; the logits are what it keeps.
      traffic.forward = logit_bytes;
      traffic.backward = 2 * logit_bytes;
      traffic.saved = logit_bytes;
      break;
  }
  return traffic;
}

void CrossEntropy::emit(const ShardContext& context, const std::string& prefix, std::vector<Step>& steps) const {
  const std::int64_t tokens = context.tokens();
  const std::int64_t vocab = vocab_ / context.tp;
  const std::int64_t logits = tokens * vocab;
  const CrossEntropyKernels kernels = context.kernels.cross_entropy;
  const CrossEntropyTraffic traffic = cross_entropy_traffic(kernels, context.element_bytes());
  const Dtype dtype = kernels == CrossEntropyKernels::fused ? context.dtype : Dtype::fp32;
  const double elements = static_cast<double>(logits);

  Step loss;
  loss.name = step_name(prefix, "");
  // About 5 FLOPs a logit forward (max, subtract, exp, sum, divide) and 2 backward; the traffic
  // is what bounds them.
  loss.forward = memory_bound_work(OpClass::loss, logits * traffic.forward, 5.0 * elements, dtype, {tokens, vocab});
  loss.backward = memory_bound_work(OpClass::loss, logits * traffic.backward, 2.0 * elements, dtype, {tokens, vocab});
  loss.output_bytes = tokens * 4;
  loss.saved_bytes = logits * traffic.saved;
  loss.forward_workspace_bytes = logits * traffic.forward_workspace;
  loss.backward_workspace_bytes = logits * traffic.backward_workspace;
  steps.push_back(std::move(loss));

  if (context.tp <= 1) return;
  Step reduce;
  reduce.name = step_name(prefix, "allreduce");
  reduce.comm = CommGroupKind::tp;
  reduce.forward = communication_work(OpClass::allreduce, tokens * 3 * 4);  // max, sum and target, fp32
  reduce.output_bytes = tokens * 4;
  steps.push_back(std::move(reduce));
}

}  // namespace weft
