#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "cost_models/cluster_cost_model.hpp"
#include "cost_models/cluster_spec.hpp"
#include "simulator/core/input_error.hpp"
#include "simulator/plan/execution_plan.hpp"

namespace weft::cli {

// Runs `fn`, prefixing any InputError with the flag or file it concerns.
template <class Fn>
auto with_context(const std::string& context, Fn&& fn) {
  try {
    return fn();
  } catch (const InputError& error) {
    throw InputError(context + ": " + error.what());
  }
}

// Checks each output path a flag gave (empty: not asked for), before any work starts: that it can
// be written, that no two flags name one file (the second would overwrite the first), and that none
// is one of the files the command reads (`inputs`), which writing would destroy.
void check_output_paths(std::initializer_list<std::pair<const char*, const std::string*>> outputs,
                        const std::vector<std::string>& inputs = {});

// Writes `file` atomically with `write` (an error names `flag`), then prints "Wrote FILE" and
// `note` after it. After a Ctrl-C (interrupt.hpp) it throws Interrupted instead, before writing or
// before renaming the temporary file into place (which it then removes): no partial file is left.
void write_output(const char* flag, const std::string& file, const std::function<void(std::ostream&)>& write,
                  std::string_view note = {});

// The files write_output wrote so far, in order.
const std::vector<std::string>& written_outputs();

// --no-reuse and --stats, shared by the commands that simulate.
struct ReuseFlags {
  bool no_reuse = false;
  bool stats = false;
};

void add_reuse_flags(CLI::App& command, ReuseFlags& flags);

// --max-ops N, shared by the commands that build graphs (graph_size_limit.hpp).
void add_max_ops_flag(CLI::App& command, std::int64_t& max_ops);

// --calibration PROFILE, shared by the commands that simulate.
void add_calibration_flag(CLI::App& command, std::string& file);

// --strict, shared by the commands that simulate: an uncalibrated placement is an error
// (check_calibrated_placements).
void add_strict_flag(CLI::App& command, bool& strict);

// What --calibration asks for: nothing when `file` is empty (the cluster's own profile stays), no
// profile for "none" (the roofline and collective model), else the profile in `file`; throws
// InputError naming the flag.
std::optional<std::shared_ptr<const CalibratedCostModel>> read_calibration(const std::string& file);

// Checks that the profile read from `file` and put on `cluster` was measured on its device.
void check_calibration_device(const std::string& file, const ClusterSpec& cluster);

// Tells the user, on stderr, of every communicator placement the cost model met that the
// cluster's calibration profile measured no communication over (when it measured some): those
// ops are costed by the collective model, not by a fit of another placement. With `strict`, the
// first such placement is an InputError naming --strict.
void check_calibrated_placements(const ClusterCostModel& cost, bool strict);
void check_calibrated_placements(const std::vector<CommGroup>& uncalibrated, bool strict);

// Puts what --calibration asks for (read_calibration) on `cluster`, after checking that a profile
// was measured on the cluster's device; throws InputError naming the flag otherwise.
void apply_calibration(const std::string& file, ClusterSpec& cluster);

// Now, as ISO 8601 in UTC ("2026-11-23T12:00:00Z"), for the files weft records measurements in.
std::string utc_timestamp();

// Writes `plan` to `file` (--emit-plan) and says how to run it.
void write_execution_plan(const std::string& file, const ExecutionPlan& plan);

// With --stats: how the process-wide subgraph schedule cache fared.
void print_reuse_stats(const ReuseFlags& flags);

}  // namespace weft::cli
