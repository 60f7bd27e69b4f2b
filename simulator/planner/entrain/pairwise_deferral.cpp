#include "simulator/planner/entrain/pairwise_deferral.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>

#include "simulator/core/input_error.hpp"

namespace weft::entrain {
namespace {

// Rounded totals beyond this would make the subset-sum table larger than a planner should hold.
constexpr std::int64_t kMaxTableEntries = std::int64_t{1} << 26;

double sum_of(const SampleSet& set, std::span<const double> work) {
  double total = 0.0;
  for (const std::size_t sample : set) total += work[sample];
  return total;
}

// Whether every row of `critical` gets its own column with V <= threshold (augmenting paths).
bool match_critical(const std::vector<std::vector<double>>& v, const std::vector<std::size_t>& critical,
                    double threshold, std::vector<int>& row_of_column) {
  const std::size_t n = v.size();
  row_of_column.assign(n, -1);
  std::vector<bool> seen;
  std::function<bool(std::size_t)> augment = [&](std::size_t row) {
    for (std::size_t column = 0; column < n; ++column) {
      if (v[row][column] > threshold || seen[column]) continue;
      seen[column] = true;
      const int holder = row_of_column[column];
      if (holder < 0 || augment(static_cast<std::size_t>(holder))) {
        row_of_column[column] = static_cast<int>(row);
        return true;
      }
    }
    return false;
  };
  for (const std::size_t row : critical) {
    seen.assign(n, false);
    if (!augment(row)) return false;
  }
  return true;
}

std::vector<std::size_t> critical_rows(std::span<const double> l, double threshold) {
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < l.size(); ++i) {
    if (l[i] > threshold) rows.push_back(i);
  }
  return rows;
}

}  // namespace

std::vector<std::size_t> closest_subset_sum(std::span<const double> values, double target, double quantum) {
  if (!(quantum > 0.0)) throw InputError("deferral: the subset-sum quantum must be positive");
  std::vector<std::int64_t> rounded;
  std::int64_t total = 0;
  for (const double value : values) {
    rounded.push_back(std::llround(std::max(value, 0.0) / quantum));
    total += rounded.back();
    if (total > kMaxTableEntries) throw InputError("deferral: a microbatch's LLM work is too fine for its quantum");
  }
  // via[s]: the item that first reached sum s; with items taken in order and sums visited from the
  // top, the items on the way back from s are distinct and decreasing (0/1 knapsack).
  std::vector<int> via(static_cast<std::size_t>(total) + 1, -1);
  std::vector<bool> reached(static_cast<std::size_t>(total) + 1, false);
  reached[0] = true;
  for (std::size_t item = 0; item < rounded.size(); ++item) {
    const std::int64_t r = rounded[item];
    if (r == 0) continue;
    for (std::int64_t s = total; s >= r; --s) {
      const auto at = static_cast<std::size_t>(s);
      if (!reached[at] && reached[at - static_cast<std::size_t>(r)]) {
        reached[at] = true;
        via[at] = static_cast<int>(item);
      }
    }
  }
  const double goal = target / quantum;
  std::int64_t best = 0;
  for (std::int64_t s = 1; s <= total; ++s) {
    if (reached[static_cast<std::size_t>(s)] &&
        std::abs(goal - static_cast<double>(s)) < std::abs(goal - static_cast<double>(best)))
      best = s;
  }
  std::vector<std::size_t> chosen;
  for (std::int64_t s = best; s > 0;) {
    const auto item = static_cast<std::size_t>(via[static_cast<std::size_t>(s)]);
    chosen.push_back(item);
    s -= rounded[item];
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

BottleneckMatching bottleneck_match(const std::vector<std::vector<double>>& v, std::span<const double> l,
                                    double floor) {
  const std::size_t n = v.size();
  if (l.size() != n) throw InputError("deferral: one standalone cost per overloaded microbatch");
  std::vector<double> candidates{floor};
  for (std::size_t i = 0; i < n; ++i) {
    if (v[i].size() != n) throw InputError("deferral: the bottleneck cost matrix must be square");
    candidates.push_back(l[i]);
    candidates.insert(candidates.end(), v[i].begin(), v[i].end());
  }
  std::erase_if(candidates, [&](double c) { return c < floor; });
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  // The largest candidate is at least every L: no row is critical there, so it is feasible.
  std::vector<int> row_of_column;
  std::size_t low = 0;
  std::size_t high = candidates.size() - 1;
  while (low < high) {
    const std::size_t mid = (low + high) / 2;
    if (match_critical(v, critical_rows(l, candidates[mid]), candidates[mid], row_of_column))
      high = mid;
    else
      low = mid + 1;
  }
  BottleneckMatching out;
  out.threshold = candidates[low];
  match_critical(v, critical_rows(l, out.threshold), out.threshold, row_of_column);
  out.partner.assign(n, -1);
  out.defers.assign(n, false);
  for (std::size_t column = 0; column < n; ++column) {
    if (row_of_column[column] < 0) continue;
    out.partner[static_cast<std::size_t>(row_of_column[column])] = static_cast<int>(column);
    out.defers[static_cast<std::size_t>(row_of_column[column])] = true;
  }
  std::size_t next_free = 0;
  for (std::size_t row = 0; row < n; ++row) {
    if (out.partner[row] >= 0) continue;
    while (row_of_column[next_free] >= 0) ++next_free;
    row_of_column[next_free] = static_cast<int>(row);
    out.partner[row] = static_cast<int>(next_free);
  }
  return out;
}

DeferredMicrobatches pairwise_deferral(std::span<const SampleSet> microbatches, std::span<const double> llm_work,
                                       int resolution) {
  const std::size_t k = microbatches.size();
  std::vector<double> load;
  for (const SampleSet& set : microbatches) load.push_back(sum_of(set, llm_work));
  std::vector<std::size_t> by_load(k);
  std::iota(by_load.begin(), by_load.end(), std::size_t{0});
  std::stable_sort(by_load.begin(), by_load.end(), [&](std::size_t a, std::size_t b) { return load[a] > load[b]; });
  const std::size_t half = k / 2;
  const std::vector<std::size_t> overloaded(by_load.begin(), by_load.begin() + static_cast<std::ptrdiff_t>(half));
  const std::vector<std::size_t> underloaded(by_load.end() - static_cast<std::ptrdiff_t>(half), by_load.end());
  const bool middle = k % 2 == 1;
  const double floor = middle ? load[by_load[half]] : 0.0;
  const double largest = k == 0 ? 0.0 : load[by_load.front()];

  // Per pair: the deferral set (positions in the overloaded microbatch) and V_ij (Eq. 4.3).
  std::vector<std::vector<std::vector<std::size_t>>> sets(half, std::vector<std::vector<std::size_t>>(half));
  std::vector<std::vector<double>> v(half, std::vector<double>(half, 0.0));
  std::vector<double> l(half, 0.0);
  for (std::size_t i = 0; i < half; ++i) {
    const SampleSet& samples = microbatches[overloaded[i]];
    std::vector<double> work;
    for (const std::size_t sample : samples) work.push_back(llm_work[sample]);
    const double w_i = load[overloaded[i]];
    l[i] = w_i;
    for (std::size_t j = 0; j < half; ++j) {
      const double w_j = load[underloaded[j]];
      sets[i][j] = largest > 0.0 ? closest_subset_sum(work, (w_i - w_j) / 2.0,
                                                      largest / static_cast<double>(std::max(resolution, 1)))
                                 : std::vector<std::size_t>{};
      double moved = 0.0;
      for (const std::size_t position : sets[i][j]) moved += work[position];
      v[i][j] = std::max(w_i - moved, w_j + moved);
    }
  }
  const BottleneckMatching matching = bottleneck_match(v, l, floor);

  DeferredMicrobatches out;
  out.threshold = matching.threshold;
  for (std::size_t i = 0; i < half; ++i) {
    const auto j = static_cast<std::size_t>(matching.partner[i]);
    const SampleSet& over = microbatches[overloaded[i]];
    const SampleSet& under = microbatches[underloaded[j]];
    std::vector<bool> moves(over.size(), false);
    if (matching.defers[i]) {
      for (const std::size_t position : sets[i][j]) moves[position] = true;
    }
    SampleSet stays;
    SampleSet receives = under;
    for (std::size_t p = 0; p < over.size(); ++p) (moves[p] ? receives : stays).push_back(over[p]);
    out.deferred += receives.size() - under.size();
    out.encoder.push_back(over);
    out.llm.push_back(std::move(stays));
    out.encoder.push_back(under);
    out.llm.push_back(std::move(receives));
  }
  if (middle) {
    out.encoder.push_back(microbatches[by_load[half]]);
    out.llm.push_back(microbatches[by_load[half]]);
  }
  return out;
}

}  // namespace weft::entrain
