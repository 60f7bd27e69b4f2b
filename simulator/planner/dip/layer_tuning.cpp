#include "simulator/planner/dip/layer_tuning.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <tuple>

#include "simulator/core/input_error.hpp"
#include "simulator/planner/integer_program.hpp"

namespace weft::dip {
namespace {

// The combinations no other beats in both memory and time, by memory ascending (time then
// strictly descending).
std::vector<TuningCandidate> pareto_front(const std::vector<std::vector<LayerOption>>& layers) {
  std::vector<TuningCandidate> front = {{}};
  for (std::size_t l = 0; l < layers.size(); ++l) {
    if (layers[l].empty()) throw InputError("layer tuning: layer " + std::to_string(l) + " has no option");
    std::vector<TuningCandidate> grown;
    for (const TuningCandidate& partial : front) {
      for (std::size_t o = 0; o < layers[l].size(); ++o) {
        TuningCandidate next = partial;
        next.latency += layers[l][o].latency;
        next.memory += layers[l][o].memory;
        next.options.push_back(static_cast<int>(o));
        grown.push_back(std::move(next));
      }
    }
    std::sort(grown.begin(), grown.end(), [](const TuningCandidate& a, const TuningCandidate& b) {
      return a.memory != b.memory ? a.memory < b.memory : a.latency < b.latency;
    });
    front.clear();
    for (TuningCandidate& candidate : grown) {
      if (front.empty() || candidate.latency < front.back().latency) front.push_back(std::move(candidate));
    }
  }
  return front;
}

// Whether `pair` holds memory on `at`'s rank when `at` starts (§6.3's [s_i <= s_k <= t_i]). A
// pair whose backward stage ends as `at` starts has freed its bytes: the rank ran that stage
// first, so the bracket's upper bound is read as open (the interleaver's memory guard counts so).
bool live_at(const StagePair& pair, const StagePair& at) {
  return pair.rank == at.rank && pair.start <= at.start && (at.start < pair.end || &pair == &at);
}

// At the start of each pair, the memory its rank holds then under `choice`, minus the limit
// (positive: an overflow), with the pairs live then.
struct Overflow {
  Bytes excess = std::numeric_limits<Bytes>::min();
  std::vector<std::size_t> live;
};

Overflow worst_overflow(const std::vector<StagePair>& pairs, const std::vector<int>& choice, Bytes limit) {
  Overflow worst;
  for (const StagePair& at : pairs) {
    Bytes held = 0;
    std::vector<std::size_t> live;
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const StagePair& pair = pairs[i];
      if (!live_at(pair, at)) continue;
      held += pair.candidates[static_cast<std::size_t>(choice[i])].memory;
      live.push_back(i);
    }
    if (held - limit > worst.excess) worst = {held - limit, std::move(live)};
  }
  return worst;
}

TimeNs total_latency(const std::vector<StagePair>& pairs, const std::vector<int>& choice) {
  TimeNs total = 0;
  for (std::size_t i = 0; i < pairs.size(); ++i)
    total += pairs[i].candidates[static_cast<std::size_t>(choice[i])].latency;
  return total;
}

void check_pairs(const std::vector<StagePair>& pairs, Bytes limit) {
  if (limit <= 0) throw InputError("layer tuning: the memory limit must be > 0");
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    if (pairs[i].candidates.empty() || pairs[i].end < pairs[i].start)
      throw InputError("layer tuning: stage pair " + std::to_string(i) + " has no candidate or ends before it starts");
  }
}

}  // namespace

std::vector<TuningCandidate> pair_candidates(const std::vector<std::vector<LayerOption>>& layers, int k) {
  if (k < 2) throw InputError("layer tuning: at least 2 candidates per stage pair");
  const std::vector<TuningCandidate> front = pareto_front(layers);
  const Bytes least = front.front().memory;
  const Bytes most = front.back().memory;
  // The fastest within each bound: the front's last point at or under it (time falls as memory rises).
  auto fastest_within = [&](Bytes bound) {
    auto it = std::upper_bound(front.begin(), front.end(), bound,
                               [](Bytes b, const TuningCandidate& c) { return b < c.memory; });
    return std::prev(it);
  };
  std::vector<TuningCandidate> picked = {front.back()};
  for (int q = k - 2; q >= 1; --q) {
    const Bytes bound = least + static_cast<Bytes>(static_cast<double>(most - least) * q / (k - 1));
    const auto it = fastest_within(bound);
    if (it->memory != picked.back().memory) picked.push_back(*it);
  }
  if (front.front().memory != picked.back().memory) picked.push_back(front.front());
  return picked;
}

bool fits(const std::vector<StagePair>& pairs, const std::vector<int>& choice, Bytes memory_limit) {
  // A sweep per rank over the pairs' starts and ends (ends first at one instant, as live_at reads
  // the bracket): the held bytes peak at some pair's start.
  std::map<int, std::vector<std::tuple<TimeNs, int, Bytes>>> events;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const Bytes bytes = pairs[i].candidates[static_cast<std::size_t>(choice[i])].memory;
    events[pairs[i].rank].emplace_back(pairs[i].start, 1, bytes);
    events[pairs[i].rank].emplace_back(pairs[i].end, 0, -bytes);
  }
  for (auto& [rank, rank_events] : events) {
    std::sort(rank_events.begin(), rank_events.end());
    Bytes held = 0;
    for (const auto& [time, starts, bytes] : rank_events) {
      held += bytes;
      if (starts == 1 && held > memory_limit) return false;
    }
  }
  return true;
}

TuningChoice greedy_tuning(const std::vector<StagePair>& pairs, Bytes memory_limit) {
  check_pairs(pairs, memory_limit);
  std::vector<int> choice;
  for (const StagePair& pair : pairs) {
    const auto fastest = std::min_element(pair.candidates.begin(), pair.candidates.end(),
                                          [](const auto& a, const auto& b) { return a.latency < b.latency; });
    choice.push_back(static_cast<int>(fastest - pair.candidates.begin()));
  }
  while (!fits(pairs, choice, memory_limit)) {
    const Overflow overflow = worst_overflow(pairs, choice, memory_limit);
    if (overflow.excess <= 0) break;
    // The switch to a leaner candidate that saves the most bytes per added nanosecond.
    double best_rate = -1.0;
    std::size_t best_pair = 0;
    int best_candidate = -1;
    for (std::size_t i : overflow.live) {
      const TuningCandidate& now = pairs[i].candidates[static_cast<std::size_t>(choice[i])];
      for (std::size_t c = 0; c < pairs[i].candidates.size(); ++c) {
        const TuningCandidate& other = pairs[i].candidates[c];
        if (other.memory >= now.memory) continue;
        const double saved = static_cast<double>(now.memory - other.memory);
        const double added = static_cast<double>(std::max<TimeNs>(other.latency - now.latency, 0)) + 1.0;
        if (saved / added > best_rate) {
          best_rate = saved / added;
          best_pair = i;
          best_candidate = static_cast<int>(c);
        }
      }
    }
    if (best_candidate < 0) {
      throw InputError("memory limit " + std::to_string(memory_limit) + " bytes is too small: rank " +
                       std::to_string(pairs[overflow.live.front()].rank) + " overflows by " +
                       std::to_string(overflow.excess) + " bytes with its leanest candidates");
    }
    choice[best_pair] = best_candidate;
  }
  return {choice, total_latency(pairs, choice)};
}

TuningChoice solve_tuning(const std::vector<StagePair>& pairs, Bytes memory_limit, double gap) {
  const TuningChoice greedy = greedy_tuning(pairs, memory_limit);
  TimeNs fastest = 0;
  for (const StagePair& pair : pairs) {
    fastest += std::min_element(pair.candidates.begin(), pair.candidates.end(), [](const auto& a, const auto& b) {
                 return a.latency < b.latency;
               })->latency;
  }
  if (greedy.latency == fastest) return greedy;  // every pair at its fastest fits: nothing to solve
  // Columns: o_ij, pair by pair. Rows: one choice per pair, then memory at each pair's start.
  IntegerProgram program;
  std::vector<int> first_column;
  for (const StagePair& pair : pairs) {
    first_column.push_back(static_cast<int>(program.objective.size()));
    for (const TuningCandidate& candidate : pair.candidates) program.add_column(static_cast<double>(candidate.latency));
  }
  const int columns = static_cast<int>(program.objective.size());
  program.integers = columns;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const int row = program.add_row(1.0, 1.0);
    for (std::size_t j = 0; j < pairs[i].candidates.size(); ++j)
      program.set(row, first_column[i] + static_cast<int>(j), 1.0);
  }
  for (const StagePair& at : pairs) {
    const int row = program.add_row(-IntegerProgram::kInfinity, static_cast<double>(memory_limit));
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const StagePair& pair = pairs[i];
      if (!live_at(pair, at)) continue;
      for (std::size_t j = 0; j < pair.candidates.size(); ++j) {
        if (pair.candidates[j].memory == 0) continue;
        program.set(row, first_column[i] + static_cast<int>(j), static_cast<double>(pair.candidates[j].memory));
      }
    }
  }
  std::vector<double> warm(static_cast<std::size_t>(columns), 0.0);
  for (std::size_t i = 0; i < pairs.size(); ++i)
    warm[static_cast<std::size_t>(first_column[i] + greedy.candidate[i])] = 1.0;
  const IntegerSolution solved =
      solve_integer_program(program, warm, static_cast<double>(greedy.latency), {.fraction_gap = gap});
  if (solved.values.empty()) return greedy;
  const std::vector<double>& best = solved.values;
  std::vector<int> choice(pairs.size(), 0);
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    for (std::size_t j = 0; j < pairs[i].candidates.size(); ++j) {
      if (best[static_cast<std::size_t>(first_column[i]) + j] > 0.5) choice[i] = static_cast<int>(j);
    }
  }
  // The solver's answer is kept only if it checks out exactly in integers.
  if (!fits(pairs, choice, memory_limit) || total_latency(pairs, choice) > greedy.latency) return greedy;
  return {choice, total_latency(pairs, choice)};
}

}  // namespace weft::dip
