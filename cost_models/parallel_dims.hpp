#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <vector>

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

// The TP and DP degrees of one pipeline position where modules have meshes of their own
// (parallel.modules, module_meshes.hpp).
struct PositionMesh {
  int tp = 1;
  int dp = 1;
  auto operator<=>(const PositionMesh&) const = default;
};

struct ParallelDims {
  int tp = 1;
  int cp = 1;
  int dp = 1;
  int pp = 1;
  // Per pipeline position, its own TP and DP (pp entries), or empty where every position has tp
  // and dp. Positions keep Megatron's order inside them and follow each other: position p's
  // ranks come after every rank of the positions before it.
  std::vector<PositionMesh> positions{};

  int tp_at(int position) const { return positions.empty() ? tp : positions[static_cast<std::size_t>(position)].tp; }
  int dp_at(int position) const { return positions.empty() ? dp : positions[static_cast<std::size_t>(position)].dp; }
  std::int64_t position_size(int position) const { return std::int64_t{tp_at(position)} * cp * dp_at(position); }

  std::int64_t first_rank(int position) const {
    if (positions.empty()) return position * position_size(0);
    std::int64_t first = 0;
    for (int p = 0; p < position; ++p) first += position_size(p);
    return first;
  }

  std::int64_t world_size() const { return first_rank(pp); }

  std::int64_t rank_of(const RankCoordinates& c) const {
    return first_rank(c.pp) + c.tp + std::int64_t{tp_at(c.pp)} * (c.cp + std::int64_t{cp} * c.dp);
  }

  RankCoordinates coordinates_of(std::int64_t rank) const {
    RankCoordinates c;
    if (positions.empty()) {
      c.pp = static_cast<int>(rank / position_size(0));
    } else {
      while (c.pp + 1 < pp && rank >= first_rank(c.pp + 1)) ++c.pp;
    }
    rank -= first_rank(c.pp);
    const int position_tp = tp_at(c.pp);
    c.tp = static_cast<int>(rank % position_tp);
    rank /= position_tp;
    c.cp = static_cast<int>(rank % cp);
    c.dp = static_cast<int>(rank / cp);
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
