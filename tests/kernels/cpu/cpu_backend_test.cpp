// The CPU backend's kernels against direct computations.
#include <catch2/catch.hpp>

#include <cstring>

#include <Eigen/Core>

#include "kernels/cpu/cpu_backend.hpp"
#include "kernels/cpu/element_conversion.hpp"
#include "simulator/core/input_error.hpp"
#include "tests/support/naive_attention.hpp"

namespace weft {
namespace {

using test::random_values;

// A backend buffer holding `values` in `dtype`.
Buffer upload(cpu::CpuBackend& backend, const std::vector<double>& values, Dtype dtype) {
  const std::vector<float> floats(values.begin(), values.end());
  Buffer buffer = backend.allocate(static_cast<std::int64_t>(values.size()) * bytes_per_element(dtype));
  cpu::narrow(dtype, floats.data(), buffer.data(), static_cast<std::int64_t>(floats.size()));
  return buffer;
}

std::vector<double> download(const Buffer& buffer, std::size_t count, Dtype dtype) {
  std::vector<float> floats(count);
  cpu::widen(dtype, buffer.data(), floats.data(), static_cast<std::int64_t>(count));
  return {floats.begin(), floats.end()};
}

// What a 16-bit store keeps of each value.
std::vector<double> rounded(const std::vector<double>& values, Dtype dtype) {
  std::vector<float> floats(values.begin(), values.end());
  std::vector<std::byte> stored(floats.size() * static_cast<std::size_t>(bytes_per_element(dtype)));
  cpu::narrow(dtype, floats.data(), stored.data(), static_cast<std::int64_t>(floats.size()));
  cpu::widen(dtype, stored.data(), floats.data(), static_cast<std::int64_t>(floats.size()));
  return {floats.begin(), floats.end()};
}

TEST_CASE("bf16 and fp16 stores round to nearest even", "[kernels][cpu]") {
  // 1 + 2^-8 lies halfway between the bf16 neighbours 1 and 1 + 2^-7: it rounds to the even one, 1.
  // 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 and 1 + 2^-6: it rounds up to the even one.
  CHECK(rounded({1.0 + 1.0 / 256, 1.0 + 3.0 / 256}, Dtype::bf16) == std::vector<double>{1.0, 1.0 + 1.0 / 64});
  // fp16 keeps 10 mantissa bits: 1 + 2^-11 rounds to 1, 1 + 3 * 2^-11 to 1 + 2^-9.
  CHECK(rounded({1.0 + 1.0 / 2048, 1.0 + 3.0 / 2048}, Dtype::fp16) == std::vector<double>{1.0, 1.0 + 1.0 / 512});
}

TEST_CASE("GEMMs match the triple loop in every dtype and layout", "[kernels][cpu]") {
  cpu::CpuBackend backend(1);
  for (GemmLayout layout : {GemmLayout::nn, GemmLayout::nt, GemmLayout::tn}) {
    for (Dtype dtype : {Dtype::fp32, Dtype::bf16, Dtype::fp16}) {
      for (const auto& dims : {std::tuple{7L, 5L, 3L}, std::tuple{33L, 17L, 65L}}) {
        // Plain variables, not structured bindings: clang 14 does not let lambdas capture those.
        const long m = std::get<0>(dims), n = std::get<1>(dims), k = std::get<2>(dims);
        INFO(kDtypeNames.name(dtype) << " " << m << "x" << n << "x" << k << " layout " << static_cast<int>(layout));
        const auto a = rounded(random_values(static_cast<std::size_t>(m * k), 1), dtype);
        const auto b = rounded(random_values(static_cast<std::size_t>(k * n), 2), dtype);
        const Buffer a_buffer = upload(backend, a, dtype), b_buffer = upload(backend, b, dtype);
        const Buffer c_buffer = backend.allocate(m * n * bytes_per_element(dtype));
        backend.gemm({m, n, k, dtype, layout}, a_buffer.data(), b_buffer.data(), c_buffer.data());
        const auto c = download(c_buffer, static_cast<std::size_t>(m * n), dtype);
        // Row-major: A(i, l) is a[i k + l], or a[l m + i] stored transposed (tn); B(l, j) is
        // b[l n + j], or b[j k + l] stored transposed (nt). 16-bit results carry one rounding.
        auto a_at = [&](long i, long l) {
          return a[static_cast<std::size_t>(layout == GemmLayout::tn ? l * m + i : i * k + l)];
        };
        auto b_at = [&](long l, long j) {
          return b[static_cast<std::size_t>(layout == GemmLayout::nt ? j * k + l : l * n + j)];
        };
        const double tolerance = dtype == Dtype::fp32 ? 1e-5 : (dtype == Dtype::bf16 ? 1.0 / 128 : 1.0 / 1024);
        for (long i = 0; i < m; ++i) {
          for (long j = 0; j < n; ++j) {
            double expected = 0.0;
            for (long l = 0; l < k; ++l) expected += a_at(i, l) * b_at(l, j);
            CHECK(c[static_cast<std::size_t>(i * n + j)] == Approx(expected).epsilon(tolerance).margin(tolerance));
          }
        }
      }
    }
  }
}

TEST_CASE("attention forward and backward match the direct computation", "[kernels][cpu]") {
  cpu::CpuBackend backend(2);
  // Multi-head (kv_heads 0: as many as heads), grouped-query (2 key and value heads) and
  // multi-query (1).
  for (std::int64_t kv_heads : {0, 2, 1}) {
    for (bool causal : {false, true}) {
      INFO("kv_heads " << kv_heads << ", causal " << causal);
      AttentionShape shape;
      shape.batch = 2;
      shape.heads = 4;
      shape.queries = 19;
      shape.keys = 23;
      shape.head_dim = 8;
      shape.causal = causal;
      shape.dtype = Dtype::fp32;
      shape.kv_heads = kv_heads;
      const auto q = random_values(static_cast<std::size_t>(shape.query_bytes() / 4), 5);
      const auto k = random_values(static_cast<std::size_t>(shape.key_bytes() / 4), 6);
      const auto v = random_values(static_cast<std::size_t>(shape.key_bytes() / 4), 7);
      const auto d_o = random_values(q.size(), 8);
      const Buffer qb = upload(backend, q, Dtype::fp32), kb = upload(backend, k, Dtype::fp32),
                   vb = upload(backend, v, Dtype::fp32), dob = upload(backend, d_o, Dtype::fp32);
      const Buffer ob = backend.allocate(shape.query_bytes()), lse = backend.allocate(shape.lse_bytes());
      backend.attention_forward(shape, {qb.data(), kb.data(), vb.data(), ob.data(), lse.data()});
      const test::NaiveAttention expected = test::naive_attention_forward(shape, q, k, v);
      const auto o = download(ob, q.size(), Dtype::fp32);
      for (std::size_t i = 0; i < o.size(); ++i) CHECK(o[i] == Approx(expected.o[i]).margin(1e-5));

      const Buffer dq = backend.allocate(shape.query_bytes()), dk = backend.allocate(shape.key_bytes()),
                   dv = backend.allocate(shape.key_bytes());
      backend.attention_backward(
          shape, {qb.data(), kb.data(), vb.data(), ob.data(), lse.data(), dob.data(), dq.data(), dk.data(), dv.data()});
      const test::NaiveGradients g = test::naive_attention_backward(shape, q, k, v, d_o);
      const auto got_dq = download(dq, q.size(), Dtype::fp32), got_dk = download(dk, k.size(), Dtype::fp32),
                 got_dv = download(dv, v.size(), Dtype::fp32);
      for (std::size_t i = 0; i < q.size(); ++i) CHECK(got_dq[i] == Approx(g.d_q[i]).margin(1e-4));
      for (std::size_t i = 0; i < k.size(); ++i) CHECK(got_dk[i] == Approx(g.d_k[i]).margin(1e-4));
      for (std::size_t i = 0; i < v.size(); ++i) CHECK(got_dv[i] == Approx(g.d_v[i]).margin(1e-4));
    }
  }
}

TEST_CASE("the memory-bound kernel reads every input once and writes every output once", "[kernels][cpu]") {
  cpu::CpuBackend backend(1);
  // 10 inputs onto 4 outputs: output i sums inputs i, i + 4, i + 8 (those that exist) and scales
  // by 1/3 (three passes); 4 operations per output are two steps x -> 0.999 x + 0.001.
  std::vector<double> in(10);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<double>(i + 1);
  const Buffer in_buffer = upload(backend, in, Dtype::fp32);
  const Buffer out_buffer = backend.allocate(4 * 4);
  backend.memory_bound({10, 4, 4, Dtype::fp32}, in_buffer.data(), out_buffer.data());
  const auto out = download(out_buffer, 4, Dtype::fp32);
  const std::vector<double> sums = {1 + 5 + 9, 2 + 6 + 10, 3 + 7, 4 + 8};
  for (std::size_t i = 0; i < 4; ++i) {
    double x = sums[i] / 3.0;
    x = (x * 0.999 + 0.001) * 0.999 + 0.001;
    CHECK(out[i] == Approx(x).epsilon(1e-6));
  }
}

TEST_CASE("the CPU backend rejects what it cannot run", "[kernels][cpu]") {
  cpu::CpuBackend backend(1);
  const Buffer buffer = backend.allocate(1024);
  CHECK_THROWS_AS(backend.gemm({4, 4, 4, Dtype::fp8}, buffer.data(), buffer.data(), buffer.data()), InputError);
  CHECK_THROWS_AS(backend.gemm({0, 4, 4, Dtype::fp32}, buffer.data(), buffer.data(), buffer.data()), InputError);
  AttentionShape causal;
  causal.queries = 8;
  causal.keys = 4;
  causal.head_dim = 4;
  causal.causal = true;
  CHECK_THROWS_WITH(backend.attention_forward(causal, {}), Catch::Contains("at least as many keys as queries"));
}

TEST_CASE("spans are timed on the monotonic clock", "[kernels][cpu]") {
  cpu::CpuBackend backend(1);
  const std::int64_t before = backend.clock_ns();
  backend.open_span(7);
  backend.open_span(8);
  backend.close_span(8);
  backend.close_span(7);
  const std::int64_t after = backend.clock_ns();
  const auto spans = backend.take_spans();
  REQUIRE(spans.size() == 2);
  CHECK(spans[0].id == 8);
  CHECK(spans[1].id == 7);
  CHECK(spans[1].start_ns >= before);
  CHECK(spans[1].start_ns <= spans[0].start_ns);
  CHECK(spans[0].end_ns <= spans[1].end_ns);
  CHECK(spans[1].end_ns <= after);
  CHECK(backend.take_spans().empty());
}

}  // namespace
}  // namespace weft
