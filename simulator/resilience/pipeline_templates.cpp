#include "simulator/resilience/pipeline_templates.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "simulator/core/input_error.hpp"

namespace weft {
namespace {

// Each template's microbatches are searched this far either side of the continuous optimum at
// first, twice as far each time no split adds up.
constexpr std::int64_t kFirstBatchWindow = 8;
constexpr int kBatchRounds = 20;

// The least Σ x_j (N_j T_j − m)² over integer N_j ≥ 1 (within the window around `centre`) with
// Σ x_j N_j = microbatches, by a knapsack over the microbatches used; nullopt when none adds up.
std::optional<std::vector<std::int64_t>> closest_split(const std::vector<double>& microbatch_s,
                                                       const TemplateCounts& counts, std::int64_t microbatches,
                                                       const std::vector<double>& centre, double m,
                                                       std::int64_t window) {
  constexpr double kUnreachable = std::numeric_limits<double>::infinity();
  const auto size = static_cast<std::size_t>(microbatches) + 1;
  std::vector<double> best(size, kUnreachable);
  best[0] = 0.0;
  // choice[j][t]: template j's microbatches when the templates up to j use t in all.
  std::vector<std::vector<std::int64_t>> choice(counts.size(), std::vector<std::int64_t>(size, 0));
  for (std::size_t j = 0; j < counts.size(); ++j) {
    if (counts[j] == 0) {
      choice[j].assign(size, 0);
      continue;
    }
    const std::int64_t low = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::floor(centre[j])) - window);
    const std::int64_t high = static_cast<std::int64_t>(std::ceil(centre[j])) + window;
    std::vector<double> next(size, kUnreachable);
    for (std::size_t used = 0; used < size; ++used) {
      if (best[used] == kUnreachable) continue;
      for (std::int64_t n = low; n <= high; ++n) {
        const std::size_t total = used + static_cast<std::size_t>(n * counts[j]);
        if (total >= size) break;
        const double gap = static_cast<double>(n) * microbatch_s[j] - m;
        const double cost = best[used] + counts[j] * gap * gap;
        if (cost < next[total]) {
          next[total] = cost;
          choice[j][total] = n;
        }
      }
    }
    best = std::move(next);
  }
  if (best[size - 1] == kUnreachable) return std::nullopt;
  std::vector<std::int64_t> out(counts.size(), 0);
  std::size_t used = size - 1;
  for (std::size_t j = counts.size(); j-- > 0;) {
    if (counts[j] == 0) continue;
    out[j] = choice[j][used];
    used -= static_cast<std::size_t>(out[j] * counts[j]);
  }
  return out;
}

double weighted_mean_time(const std::vector<double>& microbatch_s, const TemplateCounts& counts,
                          const std::vector<std::int64_t>& per_pipeline) {
  double sum = 0.0;
  double pipelines = 0.0;
  for (std::size_t j = 0; j < counts.size(); ++j) {
    sum += counts[j] * static_cast<double>(per_pipeline[j]) * microbatch_s[j];
    pipelines += counts[j];
  }
  return sum / pipelines;
}

}  // namespace

std::vector<int> template_node_counts(int n0, int nodes, int f) {
  std::vector<int> out;
  if (n0 < 1 || f < 0 || nodes < (f + 1) * n0) return out;
  for (int n = n0; n <= nodes - f * n0; ++n) out.push_back(n);
  return out;
}

std::vector<int> template_node_counts(int n0, int nodes, int f, TemplateSet set) {
  std::vector<int> out = template_node_counts(n0, nodes, f);
  if (set == TemplateSet::minimal && out.size() > static_cast<std::size_t>(n0))
    out.resize(static_cast<std::size_t>(n0));
  return out;
}

std::vector<TemplateCounts> two_template_instantiations(const std::vector<int>& node_counts, int nodes, int f) {
  std::vector<TemplateCounts> out;
  const std::size_t templates = node_counts.size();
  for (std::size_t i = 0; i < templates; ++i) {
    // x of template i alone, or with y > 0 of a larger template j.
    for (int x = 0; x * node_counts[i] <= nodes; ++x) {
      const int rest = nodes - x * node_counts[i];
      if (rest == 0) {
        if (x >= f + 1) {
          TemplateCounts counts(templates, 0);
          counts[i] = x;
          out.push_back(std::move(counts));
        }
        continue;
      }
      if (x == 0) continue;
      for (std::size_t j = i + 1; j < templates; ++j) {
        if (rest % node_counts[j] != 0 || x + rest / node_counts[j] < f + 1) continue;
        TemplateCounts counts(templates, 0);
        counts[i] = x;
        counts[j] = rest / node_counts[j];
        out.push_back(std::move(counts));
      }
    }
  }
  return out;
}

std::vector<TemplateCounts> feasible_instantiations(const std::vector<int>& node_counts, int nodes, int f,
                                                    std::size_t limit) {
  // Count first (saturating), so that nothing past the limit is built.
  const auto size = static_cast<std::size_t>(nodes) + 1;
  std::vector<std::size_t> ways(size, 0);
  ways[0] = 1;
  for (const int n : node_counts) {
    for (std::size_t total = static_cast<std::size_t>(n); total < size; ++total) {
      ways[total] = std::min(limit + 1, ways[total] + ways[total - static_cast<std::size_t>(n)]);
    }
  }
  std::size_t held = 0;
  for (const std::size_t count : ways) held = std::min(limit + 1, held + count);
  if (held > limit) {
    throw InputError("more than " + std::to_string(limit) + " combinations of pipeline templates use " +
                     std::to_string(nodes) + " nodes");
  }
  // Eq. 2.5: X(p', N') = X(p' − 1, N') ++ θ(X(p', N' − n_p'), p'), one template at a time.
  std::vector<std::vector<TemplateCounts>> table(size);
  table[0].push_back(TemplateCounts(node_counts.size(), 0));
  for (std::size_t p = 0; p < node_counts.size(); ++p) {
    const auto n = static_cast<std::size_t>(node_counts[p]);
    for (std::size_t total = n; total < size; ++total) {
      for (TemplateCounts counts : table[total - n]) {
        ++counts[p];
        table[total].push_back(std::move(counts));
      }
    }
  }
  std::vector<TemplateCounts> out;
  for (TemplateCounts& counts : table[size - 1]) {
    int pipelines = 0;
    for (const int x : counts) pipelines += x;
    if (pipelines >= f + 1) out.push_back(std::move(counts));
  }
  return out;
}

std::optional<std::vector<std::int64_t>> distribute_batch(const std::vector<double>& microbatch_s,
                                                          const TemplateCounts& counts, std::int64_t microbatches) {
  // The continuous optimum gives every pipeline the same time m = M / Σ x_j / T_j.
  double rate = 0.0;
  for (std::size_t j = 0; j < counts.size(); ++j) rate += counts[j] / microbatch_s[j];
  double m = static_cast<double>(microbatches) / rate;
  std::vector<double> centre(counts.size());
  for (std::size_t j = 0; j < counts.size(); ++j) centre[j] = m / microbatch_s[j];
  // The narrowest window around the optimum in which some split adds up (none may).
  std::int64_t window = kFirstBatchWindow;
  std::optional<std::vector<std::int64_t>> split = closest_split(microbatch_s, counts, microbatches, centre, m, window);
  while (!split && window < microbatches) {
    window *= 2;
    split = closest_split(microbatch_s, counts, microbatches, centre, m, window);
  }
  // Eq. 2.6's variance is the least Σ (N_i T_i − m)² over m too: alternate between the best split
  // for m and the mean of that split until neither moves.
  for (int round = 0; split && round < kBatchRounds; ++round) {
    m = weighted_mean_time(microbatch_s, counts, *split);
    auto next = closest_split(microbatch_s, counts, microbatches, centre, m, window);
    if (next == split) break;
    split = std::move(next);
  }
  return split;
}

double batch_imbalance(const std::vector<double>& microbatch_s, const TemplateCounts& counts,
                       const std::vector<std::int64_t>& per_pipeline) {
  const double mean = weighted_mean_time(microbatch_s, counts, per_pipeline);
  double sum = 0.0;
  for (std::size_t j = 0; j < counts.size(); ++j) {
    const double gap = static_cast<double>(per_pipeline[j]) * microbatch_s[j] - mean;
    sum += counts[j] * gap * gap;
  }
  return sum;
}

}  // namespace weft
