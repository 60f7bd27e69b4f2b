#pragma once

// What a plan recomputes: the policy (none, selective, full) and, under full recompute, the layers
// it picks (parallel.recompute, parallel.recompute_layers; docs/scenarios.md), with their names
// in reports and sweep grids.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "simulator/core/enum_names.hpp"

namespace weft {

enum class RecomputePolicy : std::uint8_t { none, selective, full };

inline constexpr EnumNames<RecomputePolicy, 3> kRecomputePolicyNames({"none", "selective", "full"});

// The layers full recompute checkpoints (docs/scenarios.md): every one; the first `count` of each
// model chunk, as Megatron-LM's `--recompute-method block --recompute-num-layers` does; or every
// `count`-th of each pipeline rank's layers, counted from 1 over its chunks in order, as
// torchtitan's selective layer checkpointing (`selective_ac_option`) does. The others keep every
// activation. Or every layer, in groups of `count` consecutive layers of each chunk that keep only
// the group's input and are recomputed together before the group's backward, as Megatron-LM's
// `--recompute-method uniform --recompute-num-layers` does (`uniform`).
struct LayerRecompute {
  enum class Method : std::uint8_t { all, first, every, uniform };
  Method method = Method::all;
  int count = 0;
  bool operator==(const LayerRecompute&) const = default;
};
// "the first 4 layers of each chunk", "every 2nd layer of each rank", "every layer, in groups of 4
// of each chunk"; "every layer" for all.
std::string describe(const LayerRecompute& pick);

// A recompute policy with, under full recompute, the layers it picks: the value of a sweep's
// recompute axis and the plan's recompute in its label and CSV row.
struct RecomputeChoice {
  RecomputePolicy policy = RecomputePolicy::none;
  LayerRecompute layers;
  bool operator==(const RecomputeChoice&) const = default;
};
// "none", "selective", "full", "full/first4" (the first 4 layers of each chunk), "full/every2",
// "full/uniform4" (every layer, in groups of 4).
std::string recompute_name(const RecomputeChoice& choice);
// The choice `recompute_name` writes as `text`; nullopt for any other text.
std::optional<RecomputeChoice> parse_recompute_choice(std::string_view text);

}  // namespace weft
