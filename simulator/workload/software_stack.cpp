#include "simulator/workload/software_stack.hpp"

#include <cmath>

#include "simulator/core/spec_resolver.hpp"
#include "simulator/core/units.hpp"

namespace weft {
namespace {

SoftwareStack parse_software_stack(const JsonCursor& json) {
  json.expect_only({"name", "description", "source", "attention", "swiglu", "overlap_grad_reduce",
                    "overlap_param_gather", "gradient_bytes", "low_precision_gradients", "make_vocab_size_divisible_by",
                    "cross_entropy", "optimizer_step", "fp32_parameters", "tp_comm_overlap", "selective_recompute",
                    "cuda_context_MiB", "layer_framework_us"});
  SoftwareStack stack;
  stack.name = json.find("name") ? json.at("name").as_string() : "inline";
  const JsonCursor attention = json.at("attention");
  if (attention.is_string()) {
    stack.default_attention = read_kernel(attention, OpClass::attention_fwd);
  } else {
    for (const auto& [architecture, value] : attention.members()) {
      if (architecture == "default") {
        stack.default_attention = read_kernel(value, OpClass::attention_fwd);
      } else {
        stack.attention[architecture] = read_kernel(value, OpClass::attention_fwd);
      }
    }
    if (!attention.find("default")) attention.fail("expected a \"default\" kernel for other architectures");
  }
  if (auto swiglu = json.find("swiglu")) {
    const std::string fusion = swiglu->as_string();
    if (fusion != "fused" && fusion != "unfused") swiglu->fail("expected \"fused\" or \"unfused\"");
    stack.fused_swiglu = fusion == "fused";
  }
  if (auto value = json.find("cross_entropy")) stack.cross_entropy = value->as_enum(kCrossEntropyKernelNames);
  if (auto value = json.find("optimizer_step")) stack.optimizer_step = value->as_enum(kOptimizerStepKernelNames);
  if (auto value = json.find("selective_recompute")) {
    stack.selective_recompute = value->as_enum(kSelectiveRecomputeNames);
  }
  if (auto value = json.find("overlap_grad_reduce")) stack.overlap_grad_reduce = value->as_bool();
  if (auto value = json.find("overlap_param_gather")) stack.overlap_param_gather = value->as_bool();
  if (auto value = json.find("tp_comm_overlap")) stack.tp_comm_overlap = value->as_bool();
  if (auto value = json.find("fp32_parameters")) stack.fp32_parameters = value->as_bool();
  if (auto value = json.find("low_precision_gradients")) stack.keeps_low_precision_gradients = value->as_bool();
  if (auto value = json.find("cuda_context_MiB")) {
    const double mib = value->as_nonnegative_number();
    if (mib > kMaxCudaContextMiB) value->fail("expected at most " + std::to_string(kMaxCudaContextMiB) + " MiB");
    stack.cuda_context = static_cast<Bytes>(mib * kBytesPerMiB);
  }
  if (auto value = json.find("layer_framework_us")) {
    const double us = value->as_nonnegative_number();
    if (us > static_cast<double>(kMaxLayerFrameworkUs)) {
      value->fail("expected at most " + std::to_string(kMaxLayerFrameworkUs) + " us");
    }
    stack.layer_framework_ns = static_cast<TimeNs>(std::llround(us * kNsPerMicrosecond));
  }
  if (auto value = json.find("make_vocab_size_divisible_by")) stack.vocab_divisible_by = value->as_positive_int();
  if (auto bytes = json.find("gradient_bytes")) {
    bytes->expect_only({"bf16", "fp16"});
    for (auto [dtype, field] :
         {std::pair{"bf16", &stack.bf16_gradient_bytes}, std::pair{"fp16", &stack.fp16_gradient_bytes}}) {
      const auto value = bytes->find(dtype);
      if (!value) continue;
      *field = value->as_positive_int();
      if (*field != 2 && *field != 4) value->fail("expected 2 (16-bit gradients) or 4 (fp32)");
    }
  }
  return stack;
}

}  // namespace

KernelChoices SoftwareStack::kernels(const DeviceSpec& gpu) const {
  KernelChoices choices;
  const auto found = attention.find(gpu.architecture);
  choices.attention = found != attention.end() ? found->second : default_attention;
  choices.fused_swiglu = fused_swiglu;
  choices.cross_entropy = cross_entropy;
  choices.layer_framework_ns = layer_framework_ns;
  return choices;
}

std::optional<std::string> attention_dtype_conflict(const SoftwareStack& stack, const DeviceSpec& gpu, Dtype training) {
  const Kernel attention = stack.kernels(gpu).attention;
  if (mixed_precision(training) ||
      (attention != Kernel::flash2 && attention != Kernel::flash3 && attention != Kernel::cudnn)) {
    return std::nullopt;
  }
  return "stack '" + stack.name + "' runs " + std::string(kKernelNames.name(attention)) + " attention on " + gpu.name +
         ", which takes fp16 or bf16 only; training in " + std::string(kDtypeNames.name(training)) +
         " needs a stack whose attention is unfused or efficient";
}

SoftwareStack load_software_stack(const JsonCursor& json) {
  return load_spec<SoftwareStack>(json, "stacks", "software stack", parse_software_stack);
}

}  // namespace weft
