#include "kernels/bench/bench_suite.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>

namespace weft {
namespace {

using Axis = std::vector<std::int64_t>;

struct Grids {
  Axis gemm;
  Axis attention_heads;
  Axis attention_sequence;
  Axis attention_head_dim;
  std::int64_t memory_min_bytes;
  std::int64_t memory_max_bytes;
  std::int64_t message_min_bytes;
  std::int64_t message_max_bytes;
  int holdouts;  // held-out shapes per (part, dtype)
};

Grids grids_for(const SuiteOptions& options) {
  const bool cpu = options.backend == BackendKind::cpu;
  if (options.quick) {
    return cpu ? Grids{{64, 256}, {2}, {64, 128}, {32, 64}, 4 << 10, 4 << 20, 1 << 10, 1 << 20, 2}
               : Grids{{256, 1024}, {8}, {512, 1024}, {64}, 64 << 10, 64 << 20, 1 << 10, 16 << 20, 2};
  }
  return cpu ? Grids{{128, 256, 512, 1024, 2048},
                     {2, 8},
                     {128, 256, 512, 1024},
                     {32, 64, 128},
                     4 << 10,
                     256 << 20,
                     1 << 10,
                     64 << 20,
                     8}
             : Grids{{256, 1024, 4096, 16384}, {8, 32}, {512, 2048, 8192},     {64, 128}, 64 << 10,
                     std::int64_t{4} << 30,    1 << 10, std::int64_t{1} << 30, 8};
}

// A size drawn log-uniformly between the ends of `axis`, rounded to a multiple of 16.
std::int64_t between(const Axis& axis, std::mt19937& generator) {
  std::uniform_real_distribution<double> uniform(std::log(static_cast<double>(axis.front())),
                                                 std::log(static_cast<double>(axis.back())));
  const auto size = static_cast<std::int64_t>(std::llround(std::exp(uniform(generator)) / 16.0)) * 16;
  return std::max<std::int64_t>(16, size);
}

void add_gemm(const Grids& grids, Dtype dtype, std::vector<BenchCase>& cases) {
  for (std::int64_t m : grids.gemm) {
    for (std::int64_t n : grids.gemm) {
      for (std::int64_t k : grids.gemm) {
        cases.push_back({OpClass::gemm, dtype, {m, n, k}, MeasurementSplit::fit, Kernel::nn});
      }
    }
  }
  for (Kernel layout : {Kernel::nt, Kernel::tn}) {
    for (std::int64_t size : grids.gemm) {
      cases.push_back({OpClass::gemm, dtype, {size, size, size}, MeasurementSplit::fit, layout, false});
    }
  }
  std::mt19937 generator(17);
  constexpr std::array kLayouts{Kernel::nn, Kernel::nt, Kernel::tn};
  for (int i = 0; i < grids.holdouts; ++i) {
    cases.push_back({OpClass::gemm,
                     dtype,
                     {between(grids.gemm, generator), between(grids.gemm, generator), between(grids.gemm, generator)},
                     MeasurementSplit::holdout,
                     kLayouts[static_cast<std::size_t>(i) % kLayouts.size()]});
  }
}

void add_attention(const Grids& grids, Dtype dtype, std::vector<BenchCase>& cases) {
  auto add = [&](std::int64_t heads, std::int64_t sequence, std::int64_t head_dim, MeasurementSplit split) {
    for (std::int64_t causal : {0, 1}) {
      for (OpClass op : {OpClass::attention_fwd, OpClass::attention_bwd}) {
        cases.push_back({op, dtype, {1, heads, sequence, sequence, head_dim, causal}, split});
      }
    }
  };
  for (std::int64_t heads : grids.attention_heads) {
    for (std::int64_t sequence : grids.attention_sequence) {
      for (std::int64_t head_dim : grids.attention_head_dim) add(heads, sequence, head_dim, MeasurementSplit::fit);
    }
  }
  // Held out: sequence lengths between the grid's, at grid head counts and head sizes.
  std::mt19937 generator(23);
  auto pick = [&](const Axis& axis) {
    return axis[std::uniform_int_distribution<std::size_t>(0, axis.size() - 1)(generator)];
  };
  for (int i = 0; i < grids.holdouts / 2; ++i) {
    const std::int64_t heads = pick(grids.attention_heads);
    const std::int64_t sequence = between(grids.attention_sequence, generator);
    add(heads, sequence, pick(grids.attention_head_dim), MeasurementSplit::holdout);
  }
}

// Sizes from `min` to `max` in x4 steps (fit) and the x2 points between them (held out).
template <class Add>
void over_sizes(std::int64_t min, std::int64_t max, int holdouts, Add&& add) {
  for (std::int64_t bytes = min; bytes <= max; bytes *= 4) add(bytes, MeasurementSplit::fit);
  int held = 0;
  for (std::int64_t bytes = min * 2; bytes < max && held < holdouts; bytes *= 4, ++held) {
    add(bytes, MeasurementSplit::holdout);
  }
}

void add_memory(const Grids& grids, Dtype dtype, std::vector<BenchCase>& cases) {
  const std::int64_t element = bytes_per_element(dtype);
  over_sizes(grids.memory_min_bytes, grids.memory_max_bytes, grids.holdouts,
             [&](std::int64_t bytes, MeasurementSplit split) {
               // Held-out shapes read twice what they write, as norms' and activations' backward passes do.
               const std::int64_t outputs = bytes / element / (split == MeasurementSplit::fit ? 2 : 3);
               cases.push_back({OpClass::elementwise, dtype, {bytes / element - outputs, outputs}, split});
             });
}

// 2, 4, 8, ... up to `count`, and `count` itself.
std::vector<int> doublings(int count) {
  std::vector<int> sizes;
  for (int size = 2; size <= count; size *= 2) sizes.push_back(size);
  if (count >= 2 && sizes.back() != count) sizes.push_back(count);
  return sizes;
}

void add_collectives(const Grids& grids, const SuiteOptions& options, std::vector<BenchCase>& cases) {
  for (const auto& placement : group_placements(options.ranks, options.ranks_per_node)) {
    const std::int64_t group = placement.first;
    const std::int64_t per_node = placement.second;
    for (OpClass op :
         {OpClass::allreduce, OpClass::allgather, OpClass::reducescatter, OpClass::alltoall, OpClass::broadcast}) {
      over_sizes(grids.message_min_bytes, grids.message_max_bytes, grids.holdouts,
                 [&](std::int64_t bytes, MeasurementSplit split) {
                   // Every rank's share a whole number of bf16 elements.
                   const std::int64_t unit = 2 * group;
                   cases.push_back({op, Dtype::bf16, {std::max(unit, bytes / unit * unit), group, per_node}, split});
                 });
    }
  }
}

void add_p2p(const Grids& grids, const SuiteOptions& options, std::vector<BenchCase>& cases) {
  const int per_node = options.ranks_per_node > 0 ? options.ranks_per_node : options.ranks;
  std::vector<int> placements;  // a pair inside a node, and across two nodes
  if (per_node >= 2) placements.push_back(2);
  if (options.ranks / per_node >= 2) placements.push_back(1);
  for (int pair_per_node : placements) {
    over_sizes(grids.message_min_bytes, grids.message_max_bytes, grids.holdouts,
               [&](std::int64_t bytes, MeasurementSplit split) {
                 cases.push_back({OpClass::send, Dtype::bf16, {bytes, 2, pair_per_node}, split});
               });
  }
}

}  // namespace

std::vector<std::pair<int, int>> group_placements(int ranks, int ranks_per_node) {
  const int per_node = ranks_per_node > 0 ? ranks_per_node : ranks;
  const int nodes = ranks / per_node;
  std::vector<std::pair<int, int>> placements;
  for (int size : doublings(per_node)) placements.emplace_back(size, size);  // inside a node (TP)
  for (int count : doublings(nodes)) {
    placements.emplace_back(count * per_node, per_node);  // whole nodes
    if (per_node > 1) placements.emplace_back(count, 1);  // one rank per node (DP of TP groups)
  }
  return placements;
}

std::vector<BenchCase> bench_cases(const SuiteOptions& options) {
  const Grids grids = grids_for(options);
  std::vector<BenchCase> cases;
  auto wants = [&](BenchPart part) {
    return std::find(options.parts.begin(), options.parts.end(), part) != options.parts.end();
  };
  for (Dtype dtype : options.dtypes) {
    if (wants(BenchPart::gemm)) add_gemm(grids, dtype, cases);
    if (wants(BenchPart::attention)) add_attention(grids, dtype, cases);
    if (wants(BenchPart::memory)) add_memory(grids, dtype, cases);
  }
  if (wants(BenchPart::collectives)) add_collectives(grids, options, cases);
  if (wants(BenchPart::p2p)) add_p2p(grids, options, cases);
  return cases;
}

}  // namespace weft
