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
// once their kernel is queued.
class RecordingBackend final : public Backend {
 public:
  RecordingBackend() { device_.issues_asynchronously = true; }
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
  void open_span(std::uint32_t) override { calls += "("; }
  void issued_span(std::uint32_t) override { calls += "!"; }
  void close_span(std::uint32_t) override { calls += ")"; }
  void synchronize() override { calls += "|"; }
  std::vector<TimedSpan> take_spans() override { return {}; }
  std::unique_ptr<Communicator> world_communicator(Communicator&) override { return nullptr; }

  std::string calls;

 private:
  BackendDevice device_;
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
  const auto hosts = measure_host_issue(backend, pool, 3, small_gemm());
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
}

TEST_CASE("a backend that runs kernels before returning has no host issue time of its own", "[kernels][bench][host]") {
  cpu::CpuBackend backend(1);
  OperandPool pool(backend);
  CHECK(measure_host_issue(backend, pool, 3, small_gemm()).empty());
}

}  // namespace
}  // namespace weft
