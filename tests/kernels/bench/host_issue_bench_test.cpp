#include "kernels/bench/host_issue_bench.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <new>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_backend.hpp"

namespace weft {
namespace {

// A backend that queues nothing and records what it was asked, as a GPU backend's calls return
// once their kernel is queued. Timing its kernels, it reports each span it was asked for as
// 1,000 ns of kernel `gap_ns` after the one before.
class RecordingBackend final : public Backend {
 public:
  explicit RecordingBackend(bool times_kernels = false) {
    device_.issues_asynchronously = true;
    device_.times_kernels = times_kernels;
  }
  const BackendDevice& device() const override { return device_; }
  Buffer allocate(std::int64_t bytes) override {
    return {
        std::shared_ptr<std::byte>(new std::byte[static_cast<std::size_t>(bytes)], std::default_delete<std::byte[]>()),
        bytes};
  }
  void upload(std::byte*, const std::byte*, std::int64_t) override {}
  void gemm(const GemmShape&, const std::byte*, const std::byte*, std::byte*) override { calls += "g"; }
  void attention_forward(const AttentionShape&, const AttentionForwardArgs&) override { calls += "a"; }
  void attention_backward(const AttentionShape&, const AttentionBackwardArgs&) override { calls += "a"; }
  void memory_bound(const MemoryBoundShape& shape, const std::byte*, std::byte*) override {
    calls += shape.outputs == 1 ? "c" : "m";
  }
  void open_span(std::uint32_t id) override {
    calls += "(";
    opened_.push_back(id);
  }
  void issued_span(std::uint32_t) override { calls += "!"; }
  void close_span(std::uint32_t) override { calls += ")"; }
  void synchronize() override { calls += "|"; }
  std::vector<TimedSpan> take_spans() override {
    std::vector<TimedSpan> spans;
    if (!device_.times_kernels) opened_.clear();
    for (std::uint32_t id : opened_) {
      const std::int64_t start = clock_ + gap_ns;
      clock_ = start + 1000;
      spans.push_back({id, start, clock_, 1000});
    }
    opened_.clear();
    return spans;
  }
  std::unique_ptr<Communicator> world_communicator(Communicator&) override { return nullptr; }

  std::string calls;
  std::int64_t gap_ns = 250;

 private:
  BackendDevice device_;
  std::vector<std::uint32_t> opened_;
  std::int64_t clock_ = 0;
};

KernelOp small_gemm() {
  KernelOp op;
  op.kind = KernelKind::gemm;
  op.gemm = {64, 64, 64, Dtype::bf16, GemmLayout::nt};
  return op;
}

TEST_CASE("the host's issue time is timed per probe over its ops issued behind a busy kernel, as weft live issues ops",
          "[kernels][bench][host]") {
  RecordingBackend backend;
  OperandPool pool(backend);
  const std::vector<HostIssueProbe> probes = host_issue_probes();
  // A GEMM, attention forward and backward, and the memory-bound kernel for every other class.
  REQUIRE(probes.size() == 4);
  CHECK(probes[0].op == OpClass::gemm);
  CHECK(probes[1].op == OpClass::attention_fwd);
  CHECK(probes[2].op == OpClass::attention_bwd);
  CHECK_FALSE(probes[3].op);
  const IssueMeasurements measured = measure_host_issue(backend, pool, 3, small_gemm());
  const auto& hosts = measured.host_issue;
  REQUIRE(hosts.size() == probes.size());
  std::string expected;
  for (std::size_t p = 0; p < probes.size(); ++p) {
    CHECK(hosts[p].op == probes[p].op);
    CHECK(hosts[p].samples_ns.size() == 3);
    for (double ns : hosts[p].samples_ns) CHECK(ns >= 0.0);
    // One untimed call and a synchronization; then each sample: the busy GEMM, the probe's ops,
    // each in a span opened, issued and closed, and one synchronization.
    const std::string call = p == 0 ? "(g!)" : p == 3 ? "(c!)" : "(a!)";
    expected += call + "|";
    for (int sample = 0; sample < 3; ++sample) {
      expected += "(g!)";
      for (int i = 0; i < kIssuesPerSample; ++i) expected += call;
      expected += "|";
    }
  }
  CHECK(backend.calls == expected);
  CHECK_FALSE(measured.kernel_gap);  // its spans are not the kernels' own times
}

TEST_CASE("where spans are the kernels' own times, the same samples give the device's gap between kernels",
          "[kernels][bench][host]") {
  RecordingBackend backend(true);
  OperandPool pool(backend);
  const IssueMeasurements measured = measure_host_issue(backend, pool, 3, small_gemm());
  REQUIRE(measured.kernel_gap);
  // One sample per probe's sample: the median gap between its 32 ops, queued behind the busy one.
  CHECK(measured.kernel_gap->samples_ns == std::vector<double>(4 * 3, 250.0));
  CHECK(measured.kernel_gap->median_ns() == 250.0);
}

TEST_CASE("the gap between kernels is the median from one probe span's end to the next one's start",
          "[kernels][bench][host]") {
  // In any order; the busy op (id 0) and ids past a sample's are not the probe's; an overlap is no gap.
  const std::vector<TimedSpan> spans = {
      {3, 2'000, 2'500, 500}, {0, 0, 1'000, 1'000},   {1, 1'100, 1'500, 400},
      {2, 1'400, 1'900, 500}, {4, 2'540, 3'000, 460}, {kIssuesPerSample + 1, 9'000, 9'100, 100},
  };
  // Gaps 1 -> 2: none (overlap), 2 -> 3: 100, 3 -> 4: 40; median 40.
  CHECK(median_kernel_gap_ns(spans) == 40.0);
  CHECK_FALSE(median_kernel_gap_ns({{1, 0, 10, 10}}));
  CHECK_FALSE(median_kernel_gap_ns({}));
}

TEST_CASE("a backend that runs kernels before returning has no host issue time of its own", "[kernels][bench][host]") {
  cpu::CpuBackend backend(1);
  OperandPool pool(backend);
  const IssueMeasurements measured = measure_host_issue(backend, pool, 3, small_gemm());
  CHECK(measured.host_issue.empty());
  CHECK_FALSE(measured.kernel_gap);
}

}  // namespace
}  // namespace weft
