#include "simulator/planner/entrain/microbatch_assignment.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "simulator/core/input_error.hpp"

namespace weft::entrain {
namespace {

// `samples` sorted by `key` descending; ties keep their order.
template <class Key>
SampleSet sorted_descending(SampleSet samples, Key key) {
  std::stable_sort(samples.begin(), samples.end(), [&](std::size_t a, std::size_t b) { return key(a) > key(b); });
  return samples;
}

}  // namespace

std::vector<SampleSet> assign_to_replicas(std::span<const SampleWork> work, int replicas) {
  if (replicas < 1 || work.size() % static_cast<std::size_t>(replicas) != 0)
    throw InputError("entrain: the global batch must split evenly over the data-parallel replicas");
  const std::size_t each = work.size() / static_cast<std::size_t>(replicas);
  SampleSet all(work.size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  std::vector<SampleSet> out(static_cast<std::size_t>(replicas));
  std::vector<double> llm(out.size(), 0.0);
  for (const std::size_t sample : sorted_descending(all, [&](std::size_t s) { return work[s].encoder; })) {
    std::size_t target = out.size();
    for (std::size_t r = 0; r < out.size(); ++r) {
      if (out[r].size() < each && (target == out.size() || llm[r] < llm[target])) target = r;
    }
    out[target].push_back(sample);
    llm[target] += work[sample].llm;
  }
  return out;
}

int effective_microbatches(std::span<const SampleWork> work, const SampleSet& samples, int microbatches) {
  double total = 0.0;
  double largest = 0.0;
  for (const std::size_t sample : samples) {
    total += work[sample].encoder;
    largest = std::max(largest, work[sample].encoder);
  }
  if (largest <= 0.0) return std::max(microbatches, 1);  // no encoder work: nothing to balance it against
  const double fits = std::floor(total / largest);
  return std::max(1, static_cast<int>(std::min(static_cast<double>(microbatches), fits)));
}

std::vector<SampleSet> stratified_assignment(std::span<const SampleWork> work, const SampleSet& samples,
                                             int microbatches) {
  if (microbatches < 1) throw InputError("entrain: at least one microbatch");
  const SampleSet by_llm = sorted_descending(samples, [&](std::size_t s) { return work[s].llm; });
  const auto coarse_count = static_cast<std::ptrdiff_t>((by_llm.size() + 1) / 2);
  const SampleSet coarse(by_llm.begin(), by_llm.begin() + coarse_count);
  const SampleSet fine(by_llm.begin() + coarse_count, by_llm.end());
  std::vector<SampleSet> out(static_cast<std::size_t>(microbatches));
  std::vector<double> load(out.size(), 0.0);
  auto encoder = [&](std::size_t s) { return work[s].encoder; };
  // The least encoder work; among equal loads (samples without encoder work leave loads equal),
  // the fewest samples, then the lower index.
  auto lighter = [&](std::size_t a, std::size_t b) {
    return load[a] != load[b] ? load[a] < load[b] : out[a].size() < out[b].size();
  };
  for (const SampleSet& stratum : {coarse, fine}) {
    for (const std::size_t sample : sorted_descending(stratum, encoder)) {
      std::size_t lightest = 0;
      for (std::size_t m = 1; m < out.size(); ++m) {
        if (lighter(m, lightest)) lightest = m;
      }
      out[lightest].push_back(sample);
      load[lightest] += work[sample].encoder;
    }
  }
  return out;
}

DeferredMicrobatches hierarchical_assignment(std::span<const SampleWork> work, const SampleSet& samples,
                                             int microbatches, bool defer) {
  const std::vector<SampleSet> stratified =
      stratified_assignment(work, samples, effective_microbatches(work, samples, microbatches));
  if (defer) {
    std::vector<double> llm;
    for (const SampleWork& sample : work) llm.push_back(sample.llm);
    return pairwise_deferral(stratified, llm);
  }
  DeferredMicrobatches out;
  out.encoder = stratified;
  out.llm = stratified;
  return out;
}

}  // namespace weft::entrain
