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

TEST_CASE("the host's issue time is timed over copies issued behind a busy kernel, as weft live issues ops",
          "[kernels][bench][host]") {
  RecordingBackend backend;
  OperandPool pool(backend);
  const auto host = measure_host_issue(backend, pool, 3, small_gemm());
  REQUIRE(host);
  CHECK(host->samples_ns.size() == 3);
  for (double ns : host->samples_ns) CHECK(ns >= 0.0);
  // Each sample: the busy GEMM, then the copies, each in a span opened, issued and closed, then
  // one synchronization.
  std::string sample = "(g!)";
  for (int i = 0; i < kIssuesPerSample; ++i) sample += "(c!)";
  sample += "|";
  CHECK(backend.calls == sample + sample + sample);
}

TEST_CASE("a backend that runs kernels before returning has no host issue time of its own", "[kernels][bench][host]") {
  cpu::CpuBackend backend(1);
  OperandPool pool(backend);
  CHECK_FALSE(measure_host_issue(backend, pool, 3, small_gemm()));
}

}  // namespace
}  // namespace weft
