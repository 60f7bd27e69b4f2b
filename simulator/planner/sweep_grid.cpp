#include "simulator/planner/sweep_grid.hpp"

#include <algorithm>
#include <charconv>
#include <string>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "simulator/core/checked_math.hpp"
#include "simulator/core/format_units.hpp"
#include "simulator/core/host_memory.hpp"
#include "simulator/core/input_error.hpp"
#include "simulator/core/split_text.hpp"

namespace weft {
namespace {

constexpr std::string_view kAxes =
    "tp, pp, cp, vpp, mb, recompute, zero, dp_shard, schedule, sp, layout, partition, module_stages, module_tp or "
    "module_dp";

[[noreturn]] void bad_value(std::string_view axis, std::string_view value, std::string_view expected) {
  throw InputError("'" + std::string(axis) + "=" + std::string(value) + "': expected " + std::string(expected));
}

std::int64_t parse_integer(std::string_view axis, std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0 || value > (1 << 24)) {
    bad_value(axis, text, "non-negative integers or ranges a..b");
  }
  return value;
}

// "1,2,4" or "1..16" (or both mixed), in the order given, without repeats.
std::vector<std::int64_t> parse_integers(std::string_view axis, std::string_view values) {
  std::vector<std::int64_t> out;
  std::unordered_set<std::int64_t> seen;  // a range may hold 100,000 values
  auto add = [&](std::int64_t value) {
    if (seen.insert(value).second) out.push_back(value);
  };
  for (std::string_view item : split_text(values, ',')) {
    if (const std::size_t dots = item.find(".."); dots != std::string_view::npos) {
      const std::int64_t low = parse_integer(axis, item.substr(0, dots));
      const std::int64_t high = parse_integer(axis, item.substr(dots + 2));
      if (low > high) bad_value(axis, item, "a range a..b with a <= b");
      if (high - low > 100'000) bad_value(axis, item, "a range of at most 100000 values");
      for (std::int64_t value = low; value <= high; ++value) add(value);
    } else {
      add(parse_integer(axis, item));
    }
  }
  return out;
}

std::vector<int> positive_ints(std::string_view axis, std::string_view values) {
  std::vector<int> out;
  for (std::int64_t value : parse_integers(axis, values)) {
    if (value < 1) bad_value(axis, values, "values of at least 1");
    out.push_back(static_cast<int>(value));
  }
  return out;
}

template <class Enum, std::size_t N>
std::vector<Enum> parse_names(std::string_view axis, std::string_view values, const EnumNames<Enum, N>& names) {
  std::vector<Enum> out;
  for (std::string_view item : split_text(values, ',')) {
    const auto value = names.parse(item);
    if (!value) bad_value(axis, item, names.choices());
    if (std::find(out.begin(), out.end(), *value) == out.end()) out.push_back(*value);
  }
  return out;
}

// A recompute axis value: "none", "full/first4", or a range of counts, "full/first2..8".
std::vector<RecomputeChoice> parse_recompute_values(std::string_view axis, std::string_view item) {
  constexpr std::string_view kExpected =
      "none, selective, full, full/firstN, full/everyK or full/uniformN (N, K >= 1, or a range a..b)";
  const std::size_t dots = item.find("..");
  const std::size_t digits = item.find_first_of("0123456789");
  if (dots == std::string_view::npos || digits == std::string_view::npos || digits > dots) {
    const auto choice = parse_recompute_choice(item);
    if (!choice) bad_value(axis, item, kExpected);
    return {*choice};
  }
  const std::string stem(item.substr(0, digits));
  const std::int64_t low = parse_integer(axis, item.substr(digits, dots - digits));
  const std::int64_t high = parse_integer(axis, item.substr(dots + 2));
  if (low > high) bad_value(axis, item, "a range a..b with a <= b");
  std::vector<RecomputeChoice> out;
  for (std::int64_t count = low; count <= high; ++count) {
    const auto choice = parse_recompute_choice(stem + std::to_string(count));
    if (!choice) bad_value(axis, item, kExpected);
    out.push_back(*choice);
  }
  return out;
}

// A dp_shard axis value: "all" (0: ZeRO over every data-parallel rank), "node" (kNodeShard) or
// shard group sizes.
std::vector<int> parse_shard_values(std::string_view axis, std::string_view values) {
  std::vector<int> out;
  for (std::string_view item : split_text(values, ',')) {
    std::vector<int> sizes{item == "node" ? kNodeShard : 0};
    if (item != "all" && item != "node") {
      if (item.find_first_not_of("0123456789.") != std::string_view::npos) {
        bad_value(axis, item, "all, node, or numbers of data-parallel ranks (ranges a..b)");
      }
      sizes = positive_ints(axis, item);
    }
    for (const int size : sizes) {
      if (std::find(out.begin(), out.end(), size) == out.end()) out.push_back(size);
    }
  }
  return out;
}

// "all" for 0, "node" for kNodeShard, the group size otherwise.
std::vector<std::string> shard_names(const std::vector<int>& sizes) {
  std::vector<std::string> out;
  for (const int size : sizes) out.push_back(size == 0 ? "all" : size == kNodeShard ? "node" : std::to_string(size));
  return out;
}

std::vector<int> powers_of_two_up_to(int limit) {
  std::vector<int> out;
  for (int value = 1; value <= limit; value *= 2) out.push_back(value);
  return out;
}

template <class Enum, std::size_t N>
std::vector<std::string_view> names_of(const std::vector<Enum>& values, const EnumNames<Enum, N>& names) {
  std::vector<std::string_view> out;
  for (Enum value : values) out.push_back(names.name(value));
  return out;
}

std::vector<std::string> recompute_names(const std::vector<RecomputeChoice>& choices) {
  std::vector<std::string> out;
  for (const RecomputeChoice& choice : choices) out.push_back(recompute_name(choice));
  return out;
}

}  // namespace

SweepGrid default_grid(const TrainingScenario& scenario, int gpus) {
  SweepGrid grid;
  grid.tp = powers_of_two_up_to(std::min(scenario.cluster.gpus_per_node, gpus));
  for (int pp = 1; pp <= std::min(scenario.model.layers(), gpus); ++pp) {
    if (gpus % pp == 0) grid.pp.push_back(pp);
  }
  const bool multimodal = scenario.model.multimodal();
  grid.cp = {1};
  for (int cp = 2; !multimodal && scenario.training.seq_len / cp >= 1024 && cp <= gpus; cp *= 2) grid.cp.push_back(cp);
  grid.vpp = {1, 2, 4, 8};
  grid.micro_batch = {1, 2, 4, 8};
  grid.recompute = {{.policy = RecomputePolicy::none, .layers = {}}, {.policy = RecomputePolicy::full, .layers = {}}};
  if (scenario.selective_recompute_drops_activations())
    grid.recompute.push_back({.policy = RecomputePolicy::selective, .layers = {}});
  grid.zero = {0, 1};
  grid.schedule = {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b, PipelineSchedule::interleaved,
                   PipelineSchedule::zb_h1};
  grid.sequence_parallel = {true, false};
  if (multimodal) {
    grid.layout = {StageLayout::shared, StageLayout::modality};
    // Time is priced on the training section's sample, which must give every module tokens.
    const auto& modules = scenario.model.modules;
    const bool timed = std::all_of(modules.begin(), modules.end(), [&](const ModuleSpec& module) {
      return module_tokens(module, scenario.training.sample()) > 0;
    });
    grid.partition = {StagePartition::parameters};
    if (timed) grid.partition.push_back(StagePartition::time);
  } else {
    grid.layout = {StageLayout::shared};
    // Stages on slower GPUs get fewer layers (docs/stragglers.md).
    grid.partition = {uneven_gpus(scenario.cluster) ? StagePartition::time : StagePartition::even};
  }
  return grid;
}

void apply_grid_spec(SweepGrid& grid, std::string_view spec) {
  for (std::string_view term : split_text(spec, ' ')) {
    if (term.empty()) continue;
    const std::size_t equals = term.find('=');
    if (equals == std::string_view::npos || equals == 0 || equals + 1 == term.size()) {
      throw InputError("'" + std::string(term) + "': expected axis=values, e.g. tp=1,2,4 or pp=1..16");
    }
    const std::string_view axis = term.substr(0, equals);
    const std::string_view values = term.substr(equals + 1);
    if (axis == "tp") {
      grid.tp = positive_ints(axis, values);
    } else if (axis == "pp") {
      grid.pp = positive_ints(axis, values);
    } else if (axis == "cp") {
      grid.cp = positive_ints(axis, values);
    } else if (axis == "vpp") {
      grid.vpp = positive_ints(axis, values);
    } else if (axis == "mb") {
      grid.micro_batch.clear();
      for (int value : positive_ints(axis, values)) grid.micro_batch.push_back(value);
    } else if (axis == "recompute") {
      grid.recompute.clear();
      for (std::string_view item : split_text(values, ',')) {
        for (const RecomputeChoice& choice : parse_recompute_values(axis, item)) {
          if (std::find(grid.recompute.begin(), grid.recompute.end(), choice) == grid.recompute.end()) {
            grid.recompute.push_back(choice);
          }
        }
      }
    } else if (axis == "dp_shard") {
      grid.dp_shard = parse_shard_values(axis, values);
    } else if (axis == "schedule") {
      grid.schedule = parse_names(axis, values, kPipelineScheduleNames);
    } else if (axis == "layout") {
      grid.layout = parse_names(axis, values, kStageLayoutNames);
    } else if (axis == "partition") {
      grid.partition = parse_names(axis, values, kStagePartitionNames);
    } else if (axis == "module_stages") {
      const std::vector<ModuleStageSplits> splits = parse_names(axis, values, kModuleStageSplitsNames);
      if (splits.size() != 1) bad_value(axis, values, "one of " + std::string(kModuleStageSplitsNames.choices()));
      grid.module_stages = splits.front();
    } else if (axis == "module_tp") {
      grid.module_tp = positive_ints(axis, values);
    } else if (axis == "module_dp") {
      grid.module_dp = positive_ints(axis, values);
    } else if (axis == "zero" || axis == "sp") {
      std::vector<int> flags;
      for (std::int64_t value : parse_integers(axis, values)) {
        if (value > (axis == "zero" ? 3 : 1)) bad_value(axis, values, axis == "zero" ? "0, 1, 2 or 3" : "0 or 1");
        flags.push_back(static_cast<int>(value));
      }
      if (axis == "zero") {
        grid.zero = flags;
      } else {
        grid.sequence_parallel.assign(flags.begin(), flags.end());
      }
    } else {
      throw InputError("unknown axis '" + std::string(axis) + "' (expected " + std::string(kAxes) + ")");
    }
  }
}

void check_grid(const SweepGrid& grid, const TrainingScenario& scenario) {
  const bool modality = std::find(grid.layout.begin(), grid.layout.end(), StageLayout::modality) != grid.layout.end();
  if (modality && !scenario.model.multimodal()) {
    throw InputError("'layout=modality': modality parallelism needs a model of several modules, and '" +
                     scenario.model.name + "' has one");
  }
  if (grid.tries_meshes() && !modality) {
    throw InputError(std::string(grid.module_tp.empty() ? "'module_dp'" : "'module_tp'") +
                     ": modules on meshes of their own have stages of their own; add layout=modality");
  }
  // Every plan enumerated is kept until the sweep ends: refuse a grid whose plans would not fit
  // in memory before enumerating any.
  const std::int64_t plans = grid_combinations(grid);
  const std::int64_t most = host_memory_bytes() / 2 / kSweepBytesPerPlan;
  if (plans > most) {
    throw InputError(fmt::format(
        "its axes make {} combinations, up to as many plans to enumerate at about {} each; the limit is {} plans "
        "(half of {}): narrow an axis",
        format_count(plans), format_bytes(kSweepBytesPerPlan), format_count(most), host_memory_text()));
  }
}

std::int64_t grid_combinations(const SweepGrid& grid) {
  std::int64_t combinations = 1;
  for (const std::size_t values :
       {grid.tp.size(), grid.pp.size(), grid.cp.size(), grid.vpp.size(), grid.micro_batch.size(), grid.recompute.size(),
        grid.zero.size(), grid.dp_shard.size(), grid.schedule.size(), grid.sequence_parallel.size(), grid.layout.size(),
        grid.partition.size(), std::max<std::size_t>(1, grid.module_tp.size()),
        std::max<std::size_t>(1, grid.module_dp.size())}) {
    combinations = saturating_mul(combinations, static_cast<std::int64_t>(values));
  }
  return combinations;
}

std::string grid_spec(const SweepGrid& grid) {
  const std::vector<int> sp(grid.sequence_parallel.begin(), grid.sequence_parallel.end());
  std::string spec = fmt::format(
      "tp={} pp={} cp={} vpp={} mb={} recompute={} zero={} dp_shard={} schedule={} sp={} layout={} partition={} "
      "module_stages={}",
      fmt::join(grid.tp, ","), fmt::join(grid.pp, ","), fmt::join(grid.cp, ","), fmt::join(grid.vpp, ","),
      fmt::join(grid.micro_batch, ","), fmt::join(recompute_names(grid.recompute), ","), fmt::join(grid.zero, ","),
      fmt::join(shard_names(grid.dp_shard), ","), fmt::join(names_of(grid.schedule, kPipelineScheduleNames), ","),
      fmt::join(sp, ","), fmt::join(names_of(grid.layout, kStageLayoutNames), ","),
      fmt::join(names_of(grid.partition, kStagePartitionNames), ","), kModuleStageSplitsNames.name(grid.module_stages));
  if (!grid.module_tp.empty()) spec += fmt::format(" module_tp={}", fmt::join(grid.module_tp, ","));
  if (!grid.module_dp.empty()) spec += fmt::format(" module_dp={}", fmt::join(grid.module_dp, ","));
  return spec;
}

}  // namespace weft
