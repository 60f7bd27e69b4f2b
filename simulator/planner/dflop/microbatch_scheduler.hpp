#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "simulator/planner/integer_program.hpp"

namespace weft::dflop {

// How a global batch's samples were split into buckets.
enum class BucketMethod : std::uint8_t { ilp, lpt, random };

struct BucketAssignment {
  std::vector<std::vector<std::size_t>> buckets;  // sample indices, increasing, per bucket
  BucketMethod method = BucketMethod::random;
  double c_max = 0.0;        // the largest bucket load, encoder or LLM (Eq. 6)
  double lower_bound = 0.0;  // no split does better: max(sum E / m, sum L / m, largest E, largest L)
  bool optimal = false;      // proven optimal: CBC proved it within its limits, or it meets the lower bound
};

// C_max of a split: the largest of every bucket's summed encoder and LLM durations.
double bucket_c_max(std::span<const double> encoder, std::span<const double> llm,
                    const std::vector<std::vector<std::size_t>>& buckets);

// The Longest Processing Time heuristic as DFLOP's scheduler falls back to it (§3.4.2): samples in
// descending order of duration (the larger of their encoder and LLM durations; ties by index),
// each to the bucket whose accumulated load (the larger of its two sums) is lowest (ties to the
// lower bucket).
BucketAssignment lpt_buckets(std::span<const double> encoder, std::span<const double> llm, int buckets);

// `samples` dealt to buckets as the baselines do: a seeded shuffle, then equal counts in turn
// (each bucket's sample indices increasing). Durations play no part.
std::vector<std::vector<std::size_t>> random_buckets(std::size_t samples, int buckets, std::uint64_t seed);

// The Online Microbatch Scheduler (§3.4.1-3.4.2): the ILP of Eq. 6 (binary x_ij, each sample in
// one bucket, every bucket's encoder and LLM sums at most C_max, minimise C_max) solved by CBC within
// `limits` (the paper's time limit, or a node budget that every machine reaches alike),
// warm-started from LPT, with sample 0 fixed to bucket 0 (buckets are interchangeable); when CBC
// does not prove its optimum within them, LPT's split, as the paper falls back (and when LPT meets
// the lower bound, no search is needed). `buckets` at least 1 and at most the samples.
BucketAssignment schedule_buckets(std::span<const double> encoder, std::span<const double> llm, int buckets,
                                  const SearchLimits& limits);

}  // namespace weft::dflop
