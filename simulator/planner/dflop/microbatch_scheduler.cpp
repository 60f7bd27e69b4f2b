#include "simulator/planner/dflop/microbatch_scheduler.hpp"

#include <algorithm>
#include <numeric>
#include <random>

#include "simulator/planner/integer_program.hpp"

namespace weft::dflop {
namespace {

double lower_bound(std::span<const double> encoder, std::span<const double> llm, int buckets) {
  const double m = buckets;
  double bound = std::max(std::accumulate(encoder.begin(), encoder.end(), 0.0) / m,
                          std::accumulate(llm.begin(), llm.end(), 0.0) / m);
  for (const double e : encoder) bound = std::max(bound, e);
  for (const double l : llm) bound = std::max(bound, l);
  return bound;
}

BucketAssignment finish(std::span<const double> encoder, std::span<const double> llm,
                        std::vector<std::vector<std::size_t>> buckets, BucketMethod method) {
  BucketAssignment out;
  for (auto& bucket : buckets) std::sort(bucket.begin(), bucket.end());
  out.c_max = bucket_c_max(encoder, llm, buckets);
  out.lower_bound = lower_bound(encoder, llm, static_cast<int>(buckets.size()));
  out.buckets = std::move(buckets);
  out.method = method;
  return out;
}

}  // namespace

double bucket_c_max(std::span<const double> encoder, std::span<const double> llm,
                    const std::vector<std::vector<std::size_t>>& buckets) {
  double worst = 0.0;
  for (const auto& bucket : buckets) {
    double e = 0.0;
    double l = 0.0;
    for (const std::size_t i : bucket) {
      e += encoder[i];
      l += llm[i];
    }
    worst = std::max({worst, e, l});
  }
  return worst;
}

BucketAssignment lpt_buckets(std::span<const double> encoder, std::span<const double> llm, int buckets) {
  std::vector<std::size_t> order(encoder.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  auto duration = [&](std::size_t i) { return std::max(encoder[i], llm[i]); };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return duration(a) > duration(b); });
  std::vector<std::vector<std::size_t>> out(static_cast<std::size_t>(buckets));
  std::vector<double> e(out.size(), 0.0);
  std::vector<double> l(out.size(), 0.0);
  for (const std::size_t i : order) {
    std::size_t lightest = 0;
    for (std::size_t j = 1; j < out.size(); ++j) {
      if (std::max(e[j], l[j]) < std::max(e[lightest], l[lightest])) lightest = j;
    }
    out[lightest].push_back(i);
    e[lightest] += encoder[i];
    l[lightest] += llm[i];
  }
  return finish(encoder, llm, std::move(out), BucketMethod::lpt);
}

std::vector<std::vector<std::size_t>> random_buckets(std::size_t samples, int buckets, std::uint64_t seed) {
  std::vector<std::size_t> order(samples);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937_64 random(seed);
  std::shuffle(order.begin(), order.end(), random);
  std::vector<std::vector<std::size_t>> out(static_cast<std::size_t>(buckets));
  for (std::size_t k = 0; k < order.size(); ++k) out[k % out.size()].push_back(order[k]);
  for (auto& bucket : out) std::sort(bucket.begin(), bucket.end());
  return out;
}

BucketAssignment schedule_buckets(std::span<const double> encoder, std::span<const double> llm, int buckets,
                                  const SearchLimits& limits) {
  const BucketAssignment greedy = lpt_buckets(encoder, llm, buckets);
  const int n = static_cast<int>(encoder.size());
  const int m = buckets;
  if (m == 1 || greedy.c_max <= greedy.lower_bound) {
    // Nothing to search: one bucket, or LPT already meets the bound the ILP cannot beat.
    BucketAssignment out = greedy;
    out.optimal = true;
    return out;
  }
  // Durations scaled to a mean of about 1, so that CBC's tolerances are relative.
  const double scale = std::max(greedy.lower_bound, 1e-30);
  // Columns: x_ij at i * m + j, then C_max.
  IntegerProgram program;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < m; ++j) program.add_column(0.0, i == 0 && j == 0 ? 1.0 : 0.0);  // sample 0 in bucket 0
  }
  program.integers = n * m;
  const int c_max = program.add_column(1.0, 0.0, IntegerProgram::kInfinity);
  for (int i = 0; i < n; ++i) {
    const int row = program.add_row(1.0, 1.0);
    for (int j = 0; j < m; ++j) program.set(row, i * m + j, 1.0);
  }
  for (const std::span<const double> load : {encoder, llm}) {
    for (int j = 0; j < m; ++j) {
      const int row = program.add_row(-IntegerProgram::kInfinity, 0.0);
      for (int i = 0; i < n; ++i) {
        if (load[static_cast<std::size_t>(i)] > 0.0)
          program.set(row, i * m + j, load[static_cast<std::size_t>(i)] / scale);
      }
      program.set(row, c_max, -1.0);
    }
  }
  // LPT's split as the first incumbent, relabelled so that sample 0 is in bucket 0.
  std::vector<double> warm(program.objective.size(), 0.0);
  std::vector<int> relabel(static_cast<std::size_t>(m));
  std::iota(relabel.begin(), relabel.end(), 0);
  for (int j = 0; j < m; ++j) {
    const auto& bucket = greedy.buckets[static_cast<std::size_t>(j)];
    if (std::find(bucket.begin(), bucket.end(), std::size_t{0}) != bucket.end()) std::swap(relabel[0], relabel[j]);
  }
  for (int j = 0; j < m; ++j) {
    for (const std::size_t i : greedy.buckets[static_cast<std::size_t>(relabel[j])])
      warm[i * static_cast<std::size_t>(m) + static_cast<std::size_t>(j)] = 1.0;
  }
  warm[static_cast<std::size_t>(c_max)] = greedy.c_max / scale;
  const IntegerSolution solved = solve_integer_program(program, warm, greedy.c_max / scale, limits);
  if (!solved.proven_optimal || solved.values.empty()) return greedy;
  const std::vector<double>& best = solved.values;
  std::vector<std::vector<std::size_t>> out(static_cast<std::size_t>(m));
  for (int i = 0; i < n; ++i) {
    int chosen = 0;
    for (int j = 0; j < m; ++j) {
      if (best[static_cast<std::size_t>(i * m + j)] > 0.5) chosen = j;
    }
    out[static_cast<std::size_t>(chosen)].push_back(static_cast<std::size_t>(i));
  }
  BucketAssignment split = finish(encoder, llm, std::move(out), BucketMethod::ilp);
  split.optimal = true;
  // The solver's split is kept only if it checks out exactly.
  return split.c_max <= greedy.c_max ? split : greedy;
}

}  // namespace weft::dflop
