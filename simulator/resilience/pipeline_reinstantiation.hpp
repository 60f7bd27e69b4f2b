#pragma once

#include <cstdint>
#include <vector>

#include "simulator/core/enum_names.hpp"
#include "simulator/core/random_stream.hpp"

namespace weft {

// How Oobleck rebuilt a pipeline that lost nodes (papers/002 §2.5.1): from the template of its
// remaining nodes; after borrowing nodes from pipelines that can spare them; or merged with
// another pipeline.
enum class ReinstantiationStep : std::uint8_t { simple, borrowed, merged };
inline constexpr EnumNames<ReinstantiationStep, 3> kReinstantiationStepNames({"simple", "borrowed", "merged"});

struct Reinstantiation {
  std::vector<int> pipelines;              // node counts after, each that of a template
  std::vector<ReinstantiationStep> steps;  // one per pipeline that lost nodes and kept some
  // False when fewer than f + 1 pipelines remain: Oobleck stops and the job restarts from a
  // checkpoint once enough nodes are back.
  bool feasible = true;
};

// Rebuilds pipelines of `pipelines` nodes (each at least n0, at most a template's) after pipeline
// k lost `lost[k]` of its nodes: a pipeline left with n0 nodes or more is reinstantiated from the
// template of that many; one left with fewer borrows nodes, one at a time from the pipeline with
// the most nodes above n0, when the others can spare enough; otherwise it merges with the smallest
// other pipeline (repeatedly, until it has n0). A pipeline left with no node is gone.
Reinstantiation reinstantiate(std::vector<int> pipelines, const std::vector<int>& lost, int n0, int f);

// Which of pipelines of `pipelines` nodes `lost` failed nodes were in: each drawn in proportion to
// the nodes it still has; the count per pipeline.
std::vector<int> draw_pipelines_hit(const std::vector<int>& pipelines, int lost, RandomStream& random);

}  // namespace weft
