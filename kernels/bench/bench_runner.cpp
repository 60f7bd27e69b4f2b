#include "kernels/bench/bench_runner.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernels/kernel_op.hpp"
#include "simulator/core/input_error.hpp"

namespace weft {
namespace {

constexpr std::uint32_t kSampleSpan = 1;
constexpr std::uint32_t kCaseOrderSeed = 20240607;

// A communication sample receives into a slot of a region this large, the next sample into the
// next slot: as in a training step (and `weft live`), where every message lands in a buffer of
// its own that is not in the core's caches. Reusing one receive buffer kept it cached and
// measured small collectives up to three times faster than the same collective inside a step.
// The sent data is the same every time: in a step it was just computed, so it is cached.
constexpr std::int64_t kReceiveRegionBytes = std::int64_t{64} << 20;

KernelOp compute_op(const BenchCase& c) {
  KernelOp op;
  switch (c.op) {
    case OpClass::gemm:
      op.kind = KernelKind::gemm;
      op.gemm = {c.shape[0], c.shape[1], c.shape[2], c.dtype, gemm_layout_of(c.kernel)};
      break;
    case OpClass::attention_fwd:
    case OpClass::attention_bwd:
      op.kind = c.op == OpClass::attention_fwd ? KernelKind::attention_forward : KernelKind::attention_backward;
      op.attention = attention_shape_of(c.shape, c.dtype);
      break;
    default:
      op.kind = KernelKind::memory_bound;
      op.memory = {c.shape[0], c.shape[1], 2, c.dtype};
  }
  return op;
}

// The case as a user reads it in an error: "gemm nt bf16 [4096, 4096, 4096]".
std::string describe(const BenchCase& c) {
  const std::string kernel = c.kernel == Kernel::any ? "" : " " + std::string(kKernelNames.name(c.kernel));
  return fmt::format("{}{} {} [{}]", kOpClassNames.name(c.op), kernel, kDtypeNames.name(c.dtype),
                     fmt::join(c.shape, ", "));
}

// Nanoseconds `work` takes on the backend, timed as one span.
template <class Work>
double time_span(Backend& backend, const BenchCase& c, Work&& work) {
  // A library's error (CUDA, cuBLASLt, cuDNN, NCCL, MPI) names its call; this names the case.
  try {
    backend.open_span(kSampleSpan);
    work();
    backend.issued_span(kSampleSpan);
    backend.synchronize();
    backend.close_span(kSampleSpan);
  } catch (const InputError& error) {
    throw InputError(describe(c) + ": " + error.what());
  } catch (const std::runtime_error& error) {
    throw std::runtime_error(describe(c) + ": " + error.what());
  }
  const std::vector<TimedSpan> spans = backend.take_spans();
  if (spans.size() != 1) {
    throw std::runtime_error(fmt::format("{}: the {} backend recorded no kernel for the sample (span timing: {}){}",
                                         describe(c), backend.device().backend, backend.device().timing,
                                         backend.unattributed_timing()));
  }
  // The time kernels ran, not the span's extent: the host may issue a short kernel slower than
  // the device runs it, and the gaps between are the host's cost, not the kernel's.
  return static_cast<double>(spans.front().busy_ns);
}

std::vector<double> time_compute(Backend& backend, OperandPool& pool, const BenchCase& c, const BenchOptions& options) {
  const KernelOp op = compute_op(c);
  // Each call on operands of its own, as weft live runs a plan's ops (operand_pool.hpp): a kernel
  // timed on the same operands over and over finds them in the cache, which a training step's
  // ops do not (on an H100, weft live's kernels of a small model ran 10-40% longer than the
  // bench's cache-hot times for the same shapes).
  pool.reserve(op.read_bytes(), op.write_bytes(), kTrainingOperandRotation);
  auto run = [&](int calls) {
    return time_span(backend, c, [&] {
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
    Communicator* group = this->group(static_cast<int>(c.shape[1]), static_cast<int>(c.shape.at(2)));
    pool_.reserve(bytes, std::max(bytes, kReceiveRegionBytes));
    std::vector<double> samples;
    if (group == nullptr) return samples;
    const std::int64_t slots = pool_.write_bytes() / bytes;
    for (int i = 0; i < options_.warmup + options_.samples; ++i) {
      std::byte* receive = pool_.write() + i % slots * bytes;
      group->barrier();
      const double own = c.op == OpClass::send ? ping_pong(*group, c, receive) : collective(*group, c, receive);
      const double slowest = group->max_host(own);
      if (i >= options_.warmup && world_.rank() == 0) samples.push_back(slowest);
    }
    return samples;
  }

 private:
  // This rank's group of `size` ranks, `per_node` on each of the first size / per_node nodes,
  // split off once per placement (every rank takes part in the split): the ranks of those nodes
  // form as many whole such groups as fit, side by side; the others sit out.
  Communicator* group(int size, int per_node) {
    auto [it, inserted] = groups_.try_emplace({size, per_node});
    if (inserted) {
      const int node_size = options_.ranks_per_node > 0 ? options_.ranks_per_node : world_.size();
      const int node = world_.rank() / node_size;
      const int local = world_.rank() % node_size;
      const bool member = node < size / per_node && (local / per_node + 1) * per_node <= node_size;
      it->second = world_.split(member ? local / per_node : -1, world_.rank());
    }
    return it->second.get();
  }

  void wait(Request& request) { request.order_before_compute(std::chrono::steady_clock::now() + options_.timeout); }

  double collective(Communicator& group, const BenchCase& c, std::byte* receive) {
    CommOp comm;
    comm.op_class = c.op;
    comm.bytes = c.shape[0];
    comm.dtype = Dtype::bf16;
    comm.on_compute_stream = true;
    return time_span(backend_, c, [&] { wait(*group.start(comm, pool_.read(), receive)); });
  }

  // Half the round trip of a message from rank 0 to rank 1 and back.
  double ping_pong(Communicator& group, const BenchCase& c, std::byte* receive) {
    const std::int64_t bytes = c.shape[0];
    const int peer = 1 - group.rank();
    CommOp send{OpClass::send, bytes, Dtype::bf16, peer, 0, true};
    CommOp recv{OpClass::recv, bytes, Dtype::bf16, peer, 0, true};
    const bool first = group.rank() == 0;
    return time_span(backend_, c,
                     [&] {
                       for (const CommOp& op : first ? std::array{send, recv} : std::array{recv, send}) {
                         wait(*group.start(op, pool_.read(), receive));
                       }
                     }) /
           2.0;
  }

  Backend& backend_;
  Communicator& world_;
  OperandPool& pool_;
  const BenchOptions& options_;
  std::map<std::pair<int, int>, std::unique_ptr<Communicator>> groups_;  // by (size, ranks per node)
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
  backend.set_wait_limit(options.timeout);
  CommunicationBench communication(backend, world, pool, options);
  // The cases run in a seeded random order, the same on every rank. A shared host's speed can
  // drift by a fifth within minutes; in the suite's order a slow stretch would bias the shapes
  // measured during it (one size range of one collective, say) and bend the fits, while in a
  // random order it adds noise spread over all shapes. The file keeps the suite's order.
  std::vector<std::size_t> order(cases.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::shuffle(order.begin(), order.end(), std::mt19937(kCaseOrderSeed));
  std::vector<Measurement> measurements(world.rank() == 0 ? cases.size() : 0);
  for (std::size_t done = 0; done < order.size(); ++done) {
    const std::size_t i = order[done];
    const BenchCase& c = cases[i];
    world.barrier();
    std::vector<double> samples;
    if (category_of(c.op) == OpCategory::communication) {
      samples = communication.time(c);
    } else {
      samples = gather_samples(world, time_compute(backend, pool, c, options));
    }
    if (world.rank() == 0) {
      Measurement& m = measurements[i];
      m.op = c.op;
      m.dtype = c.dtype;
      m.shape = c.shape;
      m.split = c.split;
      m.label = c.label;
      if (c.op == OpClass::gemm) {
        m.kernel = kernel_of(gemm_layout_of(c.kernel));
        m.grid = c.grid;
      }
      if (c.op == OpClass::attention_fwd || c.op == OpClass::attention_bwd) {
        m.kernel = backend.attention_kernel(compute_op(c).attention);
      }
      m.samples_ns = std::move(samples);
    }
    if (options.progress) options.progress(done + 1, cases.size());
  }
  return measurements;
}

}  // namespace weft
