#include "tools/weft/command_support.hpp"

#include <chrono>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>

#include "cost_models/comm_group.hpp"
#include "cost_models/profile_format.hpp"
#include "simulator/core/format_units.hpp"
#include "simulator/engine/schedule_cache.hpp"
#include "simulator/graph/graph_size_limit.hpp"
#include "simulator/io/atomic_file.hpp"
#include "tools/weft/flag_checks.hpp"
#include "tools/weft/interrupt.hpp"

namespace weft::cli {

void add_reuse_flags(CLI::App& command, ReuseFlags& flags) {
  command.add_flag("--no-reuse", flags.no_reuse,
                   "Simulate every op of every pass instead of simulating each repeated pass and layer once and "
                   "stamping it (same answer, slower; for checking)");
  command.add_flag("--stats", flags.stats,
                   "Print how often repeated passes and layers were stamped from cached schedules (hits), simulated "
                   "to fill the cache (misses) or fell back to simulating every op, and the time spent finding "
                   "and simulating those schedules; weft sweep also prints where its time went (enumeration, "
                   "then graph, engine and report per simulated plan)");
}

void add_max_ops_flag(CLI::App& command, std::int64_t& max_ops) {
  command
      .add_option("--max-ops", max_ops,
                  fmt::format("Refuse a graph estimated to hold more than N ops (default {}: half of this machine's "
                              "memory at {} bytes an op)",
                              default_max_graph_ops(), kGraphBytesPerOp))
      ->type_name("N")
      ->check(integer_from(1));
}

void add_calibration_flag(CLI::App& command, std::string& file) {
  command
      .add_option("--calibration", file,
                  "Cost ops with a calibration profile (weft calibrate) where it covers them, instead of the "
                  "cluster's own (a bundled cluster names the profile of its GPU, docs/calibration.md); it must "
                  "have been measured on the cluster's device. 'none': the roofline and collective model alone")
      ->type_name("PROFILE");
}

std::optional<std::shared_ptr<const CalibratedCostModel>> read_calibration(const std::string& file) {
  if (file.empty()) return std::nullopt;
  if (file == "none") return std::shared_ptr<const CalibratedCostModel>();
  return with_context("--calibration", [&] {
    const JsonDocument document = JsonDocument::parse_file(file);
    return with_context(file, [&] { return read_profile(document.root()); });
  });
}

void check_calibration_device(const std::string& file, const ClusterSpec& cluster) {
  if (!cluster.calibration || cluster.gpu.is(cluster.calibration->device())) return;
  throw InputError("--calibration: " + file + ": measured on '" + cluster.calibration->device() +
                   "' but the cluster's device is '" + cluster.gpu.name +
                   "' (a device spec lists the names its GPU reports in \"reported_names\")");
}

void add_strict_flag(CLI::App& command, bool& strict) {
  command.add_flag("--strict", strict,
                   "Exit 2 when the calibration profile measured communication but not over a placement (group size, "
                   "ranks per node) the plan's groups use, instead of warning and costing it by the collective model");
}

void check_calibrated_placements(const ClusterCostModel& cost, bool strict) {
  check_calibrated_placements(cost.placements_without_calibration(), strict);
}

void check_calibrated_placements(const std::vector<CommGroup>& uncalibrated, bool strict) {
  for (const CommGroup& group : uncalibrated) {
    const std::string what = fmt::format(
        "the calibration profile measured no communication over {} ({} group); the collective model costs its ops",
        placement_text(group.size, group.ranks_per_node), kCommGroupKindNames.name(group.kind));
    if (strict) throw InputError("--strict: " + what);
    fmt::print(stderr, "weft: warning: {}\n", what);
  }
}

void apply_calibration(const std::string& file, ClusterSpec& cluster) {
  if (auto calibration = read_calibration(file)) cluster.calibration = std::move(*calibration);
  check_calibration_device(file, cluster);
}

std::string utc_timestamp() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

void print_reuse_stats(const ReuseFlags& flags) {
  if (!flags.stats) return;
  const ScheduleCacheStats stats = ScheduleCache::shared().stats();
  const std::uint64_t lookups = stats.hits + stats.misses;
  fmt::print(
      "Subgraph reuse: {} hits, {} misses ({:.1f}% hit rate), {} simulations fell back to every op, {} "
      "schedules cached{}\n",
      stats.hits, stats.misses,
      lookups > 0 ? 100.0 * static_cast<double>(stats.hits) / static_cast<double>(lookups) : 0.0, stats.fallbacks,
      stats.entries, flags.no_reuse ? " (--no-reuse: none used)" : "");
  if (flags.no_reuse) return;
  fmt::print(
      "Template time: {} finding the schedules of {} composites (one lookup in {} timed), {} simulating the "
      "templates not cached\n",
      format_seconds(stats.lookup_s), stats.lookups, ScheduleCache::kTimedLookupEvery,
      format_seconds(stats.simulation_s));
}

namespace {

// Whether two paths name one file: the same file on disk where both exist (hard and symbolic links
// too), else the same path once made absolute and resolved as far as it exists.
bool same_file(const std::string& a, const std::string& b) {
  std::error_code error;
  if (std::filesystem::equivalent(a, b, error)) return true;
  const auto resolved_a = std::filesystem::weakly_canonical(a, error);
  if (error) return false;
  const auto resolved_b = std::filesystem::weakly_canonical(b, error);
  return !error && resolved_a == resolved_b;
}

}  // namespace

void check_output_paths(std::initializer_list<std::pair<const char*, const std::string*>> outputs,
                        const std::vector<std::string>& inputs) {
  std::vector<std::pair<const char*, const std::string*>> checked;
  for (const auto& [flag, file] : outputs) {
    const std::string& path = *file;  // structured bindings are not captured by clang 14's lambdas
    if (path.empty()) continue;
    with_context(flag, [&] { check_output_path(path); });
    for (const auto& [other_flag, other] : checked) {
      if (same_file(path, *other)) {
        throw InputError(
            fmt::format("{}: '{}' is also the file of {}: one would overwrite the other", flag, path, other_flag));
      }
    }
    for (const std::string& input : inputs) {
      // An input that does not exist is refused when it is read; one that does would be lost.
      std::error_code error;
      if (!input.empty() && std::filesystem::equivalent(path, input, error)) {
        throw InputError(fmt::format("{}: '{}' is a file this command reads: writing it would destroy it", flag, path));
      }
    }
    checked.emplace_back(flag, &path);
  }
}

namespace {

std::vector<std::string>& outputs_written() {
  static std::vector<std::string> files;
  return files;
}

}  // namespace

void write_output(const char* flag, const std::string& file, const std::function<void(std::ostream&)>& write,
                  std::string_view note) {
  if (interrupt_requested()) throw_interrupted(fmt::format("before writing {} {}", flag, file));
  with_context(flag, [&] {
    write_file_atomically(file, [&](std::ostream& out) {
      write(out);
      if (interrupt_requested()) throw_interrupted(fmt::format("while writing {} {}", flag, file));
    });
  });
  outputs_written().push_back(file);
  fmt::print("Wrote {}{}{}\n", file, note.empty() ? "" : " ", note);
}

const std::vector<std::string>& written_outputs() { return outputs_written(); }

void write_execution_plan(const std::string& file, const ExecutionPlan& plan) {
  write_output(
      "--emit-plan", file, [&](std::ostream& out) { out << execution_plan_json(plan).dump() << '\n'; },
      fmt::format("(the execution plan of {} rank{}; run it with mpirun -np {} weft live)", plan.world_size(),
                  plan.world_size() == 1 ? "" : "s", plan.world_size()));
}

}  // namespace weft::cli
