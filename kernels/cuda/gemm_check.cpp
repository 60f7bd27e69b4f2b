// `weft info`'s check that cuBLASLt computes weft's GEMMs in each layout (GemmShape: row-major,
// A or B stored transposed): one bf16 shape per layout on random inputs, against the product
// computed here, element by element, from the same rounded inputs.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kernels/cuda/cublaslt_gemm.hpp"
#include "kernels/cuda/cuda_backend_plugin.hpp"
#include "kernels/cuda/device_check_support.hpp"

namespace weft::cuda {
namespace {

// m, n and k apart, so that a transposition or a swapped operand cannot pass.
constexpr std::int64_t kM = 96, kN = 80, kK = 64;
constexpr double kGemmTolerance = 0.01;  // of the largest magnitude: one bf16 rounding of the result

// max |cuBLASLt - direct| / max |direct| for `layout`.
double layout_difference(GemmLayout layout, CublasLtGemm& gemm, std::mt19937& random) {
  const GemmShape shape{kM, kN, kK, Dtype::bf16, layout};
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto random_values = [&](std::int64_t count) {
    std::vector<std::uint16_t> values(static_cast<std::size_t>(count));
    for (auto& x : values) x = to_bf16(normal(random));
    return values;
  };
  const std::vector<std::uint16_t> a = random_values(kM * kK), b = random_values(kK * kN);
  DeviceArray a_device(a.size() * 2), b_device(b.size() * 2), c_device(static_cast<std::size_t>(kM * kN) * 2);
  a_device.write_bf16(a);
  b_device.write_bf16(b);
  gemm.run(shape, a_device.data, b_device.data, c_device.data, nullptr);
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  // A(i, l) is a[i k + l], or a[l m + i] stored transposed (tn); B(l, j) is b[l n + j], or
  // b[j k + l] stored transposed (nt).
  std::vector<float> expected(static_cast<std::size_t>(kM * kN));
  for (std::int64_t i = 0; i < kM; ++i) {
    for (std::int64_t j = 0; j < kN; ++j) {
      double sum = 0;
      for (std::int64_t l = 0; l < kK; ++l) {
        const std::uint16_t a_il = a[static_cast<std::size_t>(shape.a_transposed() ? l * kM + i : i * kK + l)];
        const std::uint16_t b_lj = b[static_cast<std::size_t>(shape.b_transposed() ? j * kK + l : l * kN + j)];
        sum += static_cast<double>(from_bf16(a_il)) * from_bf16(b_lj);
      }
      expected[static_cast<std::size_t>(i * kN + j)] = static_cast<float>(sum);
    }
  }
  return relative_difference(c_device.read_bf16(), expected);
}

std::string check_gemm_layouts() {
  CublasLtGemm gemm;
  std::mt19937 random(13);
  const double nn = layout_difference(GemmLayout::nn, gemm, random);
  const double nt = layout_difference(GemmLayout::nt, gemm, random);
  const double tn = layout_difference(GemmLayout::tn, gemm, random);
  const bool agree = nn <= kGemmTolerance && nt <= kGemmTolerance && tn <= kGemmTolerance;
  return fmt::format(
      "{}: cuBLASLt {} against the direct product, [m, n, k] = [{}, {}, {}] bf16, max |difference| / max |value|: "
      "nn {:.4f}, nt {:.4f}, tn {:.4f} (tolerance {})",
      agree ? "passed" : "FAILED", CublasLtGemm::version(), kM, kN, kK, nn, nt, tn, kGemmTolerance);
}

}  // namespace
}  // namespace weft::cuda

extern "C" int weft_check_cuda_gemm(char* report, std::size_t report_bytes) {
  return weft::cuda::report_check(report, report_bytes, weft::cuda::check_gemm_layouts);
}
