// `weft info`'s check that cuDNN's attention computes what weft's reference kernel computes:
// causal bf16 shapes, multi-head and grouped-query, forward and backward, on random inputs.
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernels/cuda/cuda_backend_plugin.hpp"
#include "kernels/cuda/cuda_errors.hpp"
#include "kernels/cuda/device_check_support.hpp"
#include "kernels/cuda/flash_attention_problem.hpp"
#if WEFT_HAVE_CUDNN
#include "kernels/cuda/cudnn_attention.hpp"
#endif

namespace weft::cuda {
namespace {

#if WEFT_HAVE_CUDNN
// Multi-head, and grouped-query (4 query heads on 2 key and value heads, two samples: the head
// mapping crosses batches).
constexpr AttentionShape kShapes[] = {{1, 2, 256, 256, 64, true, Dtype::bf16},
                                      {2, 4, 256, 256, 64, true, Dtype::bf16, 2}};
constexpr double kTolerance = 0.02;  // of the largest magnitude: a few bf16 roundings

// max |cuDNN - weft| / max |weft| of O, dQ, dK and dV for `shape`.
std::array<double, 4> differences(const AttentionShape& shape, std::mt19937& random) {
  const std::size_t elements = shape.query_bytes() / 2;
  const std::size_t key_elements = shape.key_bytes() / 2;
  const std::size_t rows = shape.batch * shape.heads * shape.queries;
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto random_array = [&](std::size_t count) {
    auto array = std::make_unique<DeviceArray>(count * 2);
    std::vector<std::uint16_t> host(count);
    for (auto& x : host) x = to_bf16(normal(random));
    array->write_bf16(host);
    return array;
  };
  const auto q = random_array(elements), k = random_array(key_elements), v = random_array(key_elements),
             d_o = random_array(elements);
  DeviceArray o_cudnn(elements * 2), o_weft(elements * 2), lse_cudnn(rows * 4), lse_weft(rows * 4);
  DeviceArray dq_cudnn(elements * 2), dk_cudnn(key_elements * 2), dv_cudnn(key_elements * 2);
  DeviceArray dq_weft(elements * 2), dk_weft(key_elements * 2), dv_weft(key_elements * 2);
  DeviceArray accumulator(elements * 4), delta(rows * 4);
  const FlashAttentionProblem problem = flash_attention_problem(shape, ElementType::bf16);
  CudnnAttention cudnn;
  cudnn.forward(shape, {q->get(), k->get(), v->get(), o_cudnn.get(), lse_cudnn.get()}, nullptr);
  check_cuda(launch_flash_attention_forward(problem, q->data, k->data, v->data, o_weft.data,
                                            static_cast<float*>(lse_weft.data), nullptr),
             "weft attention forward");
  // Both backward passes from the same forward (weft's O and log-sum-exp).
  cudnn.backward(shape,
                 {q->get(), k->get(), v->get(), o_weft.get(), lse_weft.get(), d_o->get(), dq_cudnn.get(),
                  dk_cudnn.get(), dv_cudnn.get()},
                 nullptr);
  check_cuda(launch_flash_attention_backward(problem, q->data, k->data, v->data, o_weft.data,
                                             static_cast<const float*>(lse_weft.data), d_o->data, dq_weft.data,
                                             dk_weft.data, dv_weft.data, static_cast<float*>(accumulator.data),
                                             static_cast<float*>(delta.data), nullptr),
             "weft attention backward");
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  return {relative_difference(o_cudnn.read_bf16(), o_weft.read_bf16()),
          relative_difference(dq_cudnn.read_bf16(), dq_weft.read_bf16()),
          relative_difference(dk_cudnn.read_bf16(), dk_weft.read_bf16()),
          relative_difference(dv_cudnn.read_bf16(), dv_weft.read_bf16())};
}

std::string check() {
  std::mt19937 random(11);
  bool agree = true;
  std::vector<std::string> results;
  for (const AttentionShape& shape : kShapes) {
    const std::array<double, 4> e = differences(shape, random);
    for (double x : e) agree = agree && x <= kTolerance;
    results.push_back(
        fmt::format("{}: O {:.4f}, dQ {:.4f}, dK {:.4f}, dV {:.4f}", attention_text(shape), e[0], e[1], e[2], e[3]));
  }
  return fmt::format(
      "{}: cuDNN {} attention against weft's reference kernel, max |difference| / max |value|: {} (tolerance {})",
      agree ? "passed" : "FAILED", CudnnAttention::version(), fmt::join(results, "; "), kTolerance);
}
#endif

}  // namespace
}  // namespace weft::cuda

extern "C" int weft_check_cuda_attention(char* report, std::size_t report_bytes) {
#if WEFT_HAVE_CUDNN
  return weft::cuda::report_check(report, report_bytes, weft::cuda::check);
#else
  std::snprintf(report, report_bytes, "not run: weft was built without cuDNN; attention runs weft's own kernel");
  return 0;
#endif
}
