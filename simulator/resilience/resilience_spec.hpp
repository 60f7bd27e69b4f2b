#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "simulator/core/json_cursor.hpp"
#include "simulator/resilience/failure_model.hpp"
#include "simulator/resilience/recovery_policy.hpp"

namespace weft {

// A resilience file (docs/resilience.md): what fails and how often, how the job recovers, and
// what runs to simulate.
struct ResilienceSpec {
  std::string description;
  FailureModel failures;
  RecoveryPolicy recovery;
  double days = 30.0;  // each run's wall-clock length, or its limit with `tokens`
  int seeds = 100;
  std::uint64_t first_seed = 1;
  std::optional<double> tokens;  // stop once trained
};

// The most seeds a study runs, and the longest run: bounds that keep a typo from running for days.
inline constexpr int kMaxSeeds = 100000;
inline constexpr double kMaxRunDays = 36500.0;

// Reads a resilience file's root; `gpus_per_node` turns failure rates per GPU into rates per
// node, `default_checkpoint_bytes` is the checkpoint's size unless the file gives one, and a
// failure trace is read relative to `directory` (the file's own).
ResilienceSpec load_resilience_spec(const JsonCursor& json, int gpus_per_node, double default_checkpoint_bytes,
                                    const std::filesystem::path& directory = {});

}  // namespace weft
