#include "kernels/bench/bench_runner.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <stdexcept>

#include "kernels/kernel_op.hpp"

namespace weft {
namespace {

constexpr std::uint32_t kSampleSpan = 1;

KernelOp compute_op(const BenchCase& c) {
  KernelOp op;
  switch (c.op) {
    case OpClass::gemm:
      op.kind = KernelKind::gemm;
      op.gemm = {c.shape[0], c.shape[1], c.shape[2], c.dtype};
      break;
    case OpClass::attention_fwd:
    case OpClass::attention_bwd:
      op.kind = c.op == OpClass::attention_fwd ? KernelKind::attention_forward : KernelKind::attention_backward;
      op.attention = {c.shape[0], c.shape[1], c.shape[2], c.shape[3], c.shape[4], c.shape[5] != 0, c.dtype};
      break;
    default:
      op.kind = KernelKind::memory_bound;
      op.memory = {c.shape[0], c.shape[1], 2, c.dtype};
  }
  return op;
}

// Nanoseconds `work` takes on the backend, timed as one span.
template <class Work>
double time_span(Backend& backend, Work&& work) {
  backend.open_span(kSampleSpan);
  work();
  backend.issued_span(kSampleSpan);
  backend.synchronize();
  backend.close_span(kSampleSpan);
  const std::vector<TimedSpan> spans = backend.take_spans();
  if (spans.size() != 1) throw std::runtime_error("the backend reported no time for a benchmark sample");
  return static_cast<double>(spans.front().end_ns - spans.front().start_ns);
}

std::vector<double> time_compute(Backend& backend, OperandPool& pool, const BenchCase& c, const BenchOptions& options) {
  const KernelOp op = compute_op(c);
  pool.reserve(op.read_bytes(), op.write_bytes());
  auto run = [&](int calls) {
    return time_span(backend, [&] {
      for (int i = 0; i < calls; ++i) run_kernel(backend, pool, op);
    });
  };
  for (int i = 0; i < options.warmup; ++i) run(1);
  const double pilot = std::max(1.0, run(1));
  const int calls = static_cast<int>(std::clamp(std::ceil(options.min_sample_ns / pilot), 1.0, 1000.0));
  std::vector<double> samples;
  for (int i = 0; i < options.samples; ++i) samples.push_back(run(calls) / calls);
  return samples;
}

class CommunicationBench {
 public:
  CommunicationBench(Backend& backend, Communicator& world, OperandPool& pool, const BenchOptions& options)
      : backend_(backend), world_(world), pool_(pool), options_(options) {}

  // Rank 0's samples; empty on the other ranks.
  std::vector<double> time(const BenchCase& c) {
    const std::int64_t bytes = c.shape[0];
    const int group_size = static_cast<int>(c.shape[1]);
    Communicator* group = this->group(group_size);
    pool_.reserve(bytes, bytes);
    std::vector<double> samples;
    if (group == nullptr) return samples;
    for (int i = 0; i < options_.warmup + options_.samples; ++i) {
      group->barrier();
      const double own = c.op == OpClass::send ? ping_pong(*group, bytes) : collective(*group, c.op, bytes);
      const double slowest = group->max_host(own);
      if (i >= options_.warmup && world_.rank() == 0) samples.push_back(slowest);
    }
    return samples;
  }

 private:
  // The ranks 0 .. size - 1, split off once per size (every rank takes part in the split).
  Communicator* group(int size) {
    auto [it, inserted] = groups_.try_emplace(size);
    if (inserted) it->second = world_.split(world_.rank() < size ? 0 : -1, world_.rank());
    return it->second.get();
  }

  void wait(Request& request) { request.order_before_compute(std::chrono::steady_clock::now() + options_.timeout); }

  double collective(Communicator& group, OpClass op, std::int64_t bytes) {
    CommOp comm;
    comm.op_class = op;
    comm.bytes = bytes;
    comm.dtype = Dtype::bf16;
    comm.on_compute_stream = true;
    return time_span(backend_, [&] { wait(*group.start(comm, pool_.read(), pool_.write())); });
  }

  // Half the round trip of a message from rank 0 to rank 1 and back.
  double ping_pong(Communicator& group, std::int64_t bytes) {
    const int peer = 1 - group.rank();
    CommOp send{OpClass::send, bytes, Dtype::bf16, peer, 0, true};
    CommOp recv{OpClass::recv, bytes, Dtype::bf16, peer, 0, true};
    const bool first = group.rank() == 0;
    return time_span(backend_,
                     [&] {
                       for (const CommOp& op : first ? std::array{send, recv} : std::array{recv, send}) {
                         wait(*group.start(op, pool_.read(), pool_.write()));
                       }
                     }) /
           2.0;
  }

  Backend& backend_;
  Communicator& world_;
  OperandPool& pool_;
  const BenchOptions& options_;
  std::map<int, std::unique_ptr<Communicator>> groups_;
};

std::vector<double> gather_samples(Communicator& world, const std::vector<double>& own) {
  std::vector<std::byte> bytes(own.size() * sizeof(double));
  std::memcpy(bytes.data(), own.data(), bytes.size());
  std::vector<double> all;
  for (const auto& part : world.gather_host(bytes, 0)) {
    const std::size_t count = part.size() / sizeof(double);
    const std::size_t offset = all.size();
    all.resize(offset + count);
    std::memcpy(all.data() + offset, part.data(), count * sizeof(double));
  }
  return all;
}

}  // namespace

std::vector<Measurement> run_bench(Backend& backend, Communicator& world, const std::vector<BenchCase>& cases,
                                   const BenchOptions& options) {
  OperandPool pool(backend);
  CommunicationBench communication(backend, world, pool, options);
  std::vector<Measurement> measurements;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const BenchCase& c = cases[i];
    world.barrier();
    std::vector<double> samples;
    if (category_of(c.op) == OpCategory::communication) {
      samples = communication.time(c);
    } else {
      samples = gather_samples(world, time_compute(backend, pool, c, options));
    }
    if (world.rank() == 0) measurements.push_back({c.op, c.dtype, c.shape, c.split, std::move(samples)});
    if (options.progress) options.progress(i + 1, cases.size());
  }
  return measurements;
}

}  // namespace weft
