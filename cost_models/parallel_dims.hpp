#pragma once

#include <cstdint>
#include <string>

namespace weft {

// Where a rank sits in a 4D parallel layout. Ranks follow Megatron's order: tensor parallel
// fastest, then context, data, and pipeline parallel slowest, so TP peers are neighbours on one
// node and pipeline stages are far apart.
struct RankCoordinates {
  int tp = 0;
  int cp = 0;
  int dp = 0;
  int pp = 0;
};

struct ParallelDims {
  int tp = 1;
  int cp = 1;
  int dp = 1;
  int pp = 1;

  std::int64_t world_size() const { return std::int64_t{tp} * cp * dp * pp; }

  std::int64_t rank_of(const RankCoordinates& c) const {
    return c.tp + std::int64_t{tp} * (c.cp + std::int64_t{cp} * (c.dp + std::int64_t{dp} * c.pp));
  }

  RankCoordinates coordinates_of(std::int64_t rank) const {
    RankCoordinates c;
    c.tp = static_cast<int>(rank % tp);
    rank /= tp;
    c.cp = static_cast<int>(rank % cp);
    rank /= cp;
    c.dp = static_cast<int>(rank % dp);
    c.pp = static_cast<int>(rank / dp);
    return c;
  }

  // How traces and reports name a rank: "stage 1 / tp 0 / dp 3" ("/ cp N" when cp > 1), the
  // same in simulated and measured traces so that they can be compared rank by rank.
  std::string label_of(const RankCoordinates& c) const {
    std::string label = "stage " + std::to_string(c.pp) + " / tp " + std::to_string(c.tp);
    if (cp > 1) label += " / cp " + std::to_string(c.cp);
    return label + " / dp " + std::to_string(c.dp);
  }
};

}  // namespace weft
