#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "calibration/derived_cluster_spec.hpp"
#include "calibration/measurements.hpp"
#include "kernels/backend_factory.hpp"
#include "kernels/bench/bench_runner.hpp"
#include "kernels/bench/host_issue_bench.hpp"
#include "kernels/bench/scenario_cases.hpp"
#include "simulator/core/json_cursor.hpp"
#include "simulator/io/progress_bar.hpp"
#include "simulator/workload/training_workload.hpp"
#include "tools/weft/command_support.hpp"
#include "tools/weft/commands.hpp"
#include "tools/weft/list_flag.hpp"
#include "tools/weft/mpi_command.hpp"

namespace weft::cli {
namespace {

struct BenchFlags {
  RankFlags rank;
  bool quick = false;
  std::string output = "measurements.json";
  std::string parts = "gemm,attention,memory,collectives,p2p";
  std::string dtypes;
  int warmup = 1;
  int samples = 0;
  double sample_ms = 0.2;
  int ranks_per_node = 0;
  std::string cluster_spec;
  std::string scenario;
};

struct BenchPlan {
  BackendOptions backend;
  SuiteOptions suite;
  BenchOptions options;
  // With --scenario: its ops' cases instead of the suite's.
  std::optional<ScenarioCases> scenario;
};

// The cases of the ops one iteration of the training scenario in `file` runs (weft bench --scenario).
ScenarioCases scenario_cases(const std::string& file, const SuiteOptions& suite, const std::string& parts) {
  const JsonDocument document = with_context(file, [&] { return JsonDocument::parse_file(file); });
  const TrainingScenario scenario = with_context(file, [&] {
    const JsonCursor root = document.root();
    if (!root.is_object() || !root.json().contains("model")) {
      throw InputError("(top level): expected a training scenario (model, cluster, parallel, training)");
    }
    return load_training_scenario(root);
  });
  const TrainingWorkload workload =
      with_context(file, [&] { return build_training_workload(scenario, {.composites = false}); });
  ScenarioCases cases = scenario_bench_cases(workload.graph, *workload.cost_model, suite);
  if (cases.cases.empty()) {
    throw InputError(fmt::format("--scenario: {} runs no op of the parts --parts names ({})", file, parts));
  }
  return cases;
}

BenchPlan plan_bench(const BenchFlags& flags, const cpu::MpiJob& job) {
  BenchPlan plan;
  plan.backend = backend_options(flags.rank, job);
  plan.suite.backend = plan.backend.kind;
  plan.suite.quick = flags.quick;
  plan.suite.ranks = job.size();
  // Ranks are placed on nodes in order, as mpirun places them by default.
  const int per_node = flags.ranks_per_node > 0 ? flags.ranks_per_node : job.local_size();
  if (flags.ranks_per_node < 0 || job.size() % per_node != 0) {
    throw InputError(
        fmt::format("--ranks-per-node: expected a divisor of the job's {} ranks, got {}", job.size(), per_node));
  }
  plan.suite.ranks_per_node = per_node;
  plan.suite.parts = parse_list_flag("--parts", flags.parts, kBenchPartNames);
  // Mixed-precision training runs its GEMMs and attention in bf16 or fp16, its loss and optimizer in fp32.
  const std::string dtypes = !flags.dtypes.empty()                   ? flags.dtypes
                             : plan.backend.kind == BackendKind::cpu ? "bf16,fp32"
                                                                     : "bf16,fp16,fp32";
  plan.suite.dtypes = parse_list_flag("--dtypes", dtypes, kDtypeNames);
  if (!flags.scenario.empty()) {
    if (!flags.dtypes.empty())
      throw InputError("--dtypes: does not apply with --scenario (its ops' own dtypes are timed)");
    if (flags.quick) throw InputError("--quick: does not apply with --scenario (its ops' own shapes are timed)");
    plan.scenario = scenario_cases(flags.scenario, plan.suite, flags.parts);
  }
  if (flags.warmup < 0) throw InputError("--warmup: expected 0 or more calls");
  if (flags.samples < 0) throw InputError("--samples: expected 1 or more samples (0 or none: the default)");
  plan.options.warmup = flags.warmup;
  plan.options.samples = flags.samples > 0 ? flags.samples : (flags.quick ? 3 : 5);
  if (!(flags.sample_ms > 0 && flags.sample_ms <= 1000))
    throw InputError(
        fmt::format("--sample-ms: expected a length above 0 and at most 1000 ms, got {}", flags.sample_ms));
  plan.options.min_sample_ns = flags.sample_ms * 1e6;
  plan.options.timeout = timeout(flags.rank);
  plan.options.ranks_per_node = per_node;
  check_output_paths({{"-o", &flags.output}, {"--cluster-spec", &flags.cluster_spec}}, {flags.scenario});
  return plan;
}

void write_cluster_spec(const std::string& file, const MeasurementSet& set) {
  const std::string description =
      fmt::format("{} node{} of {} ranks of '{}'", set.ranks / set.node_ranks(),
                  set.ranks / set.node_ranks() == 1 ? "" : "s", set.node_ranks(), set.device) +
      ", derived by weft bench on " + set.timestamp +
      ": peaks are the best measured rates, links the fitted send latency and bandwidth, "
      "every efficiency 1";
  const nlohmann::json spec =
      with_context("--cluster-spec", [&] { return cluster_spec_json(derive_cluster_spec(set), description); });
  write_output("--cluster-spec", file, [&](std::ostream& out) { out << spec.dump(2) << '\n'; });
}

// The scenario's communicator placements a job of `ranks` could not time.
void print_unplaced(const std::vector<std::pair<int, int>>& unplaced, int ranks) {
  if (unplaced.empty()) return;
  std::vector<std::string> placements;
  for (const auto& [size, per_node] : unplaced) placements.push_back(placement_text(size, per_node));
  fmt::print(
      "Not timed: communication over {} (a job of {} rank{} cannot form {}; run under mpirun with as many "
      "ranks, --ranks-per-node as on the cluster)\n",
      fmt::join(placements, "; "), ranks, ranks == 1 ? "" : "s", unplaced.size() == 1 ? "it" : "them");
}

void run_bench_command(const BenchFlags& flags) {
  auto plan = std::make_shared<BenchPlan>();
  run_on_ranks(
      [&](cpu::MpiJob& job) { *plan = plan_bench(flags, job); },
      [&](cpu::MpiJob& job) {
        const auto start = std::chrono::steady_clock::now();
        const std::unique_ptr<Backend> backend = make_backend(plan->backend);
        const std::unique_ptr<Communicator> world = backend->world_communicator(job.world());
        const std::vector<BenchCase> cases = plan->scenario ? plan->scenario->cases : bench_cases(plan->suite);
        if (cases.empty())
          throw InputError("--parts: nothing to measure with one rank (collectives and p2p need mpirun -np 2 or more)");
        std::unique_ptr<ProgressBar> progress;
        if (job.rank() == 0) {
          progress = std::make_unique<ProgressBar>("measuring");
          plan->options.progress = [&](std::size_t done, std::size_t total) { progress->update(done, total); };
        }
        MeasurementSet set;
        set.measurements = run_bench(*backend, *world, cases, plan->options);
        progress.reset();
        if (job.rank() != 0) return;
        OperandPool host_pool(*backend);
        IssueMeasurements issue = measure_host_issue(*backend, host_pool, plan->options.samples);
        set.host_issue = std::move(issue.host_issue);
        set.kernel_gap = std::move(issue.kernel_gap);
        const BackendDevice& device = backend->device();
        set.backend = device.backend;
        set.device = device.name;
        set.libraries = device.libraries;
        set.device_memory_bytes = device.memory_bytes;
        set.timestamp = utc_timestamp();
        set.ranks = job.size();
        set.ranks_per_node = plan->suite.ranks_per_node;
        set.quick = plan->suite.quick;
        set.warmup = plan->options.warmup;
        set.samples = plan->options.samples;
        set.sample_ms = flags.sample_ms;
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        fmt::print("weft bench: {} cases{} on {} ({} backend, {} rank{}) in {:.1f} s; span times from {}\n",
                   set.measurements.size(), plan->scenario ? " of " + flags.scenario : "", set.device, set.backend,
                   set.ranks, set.ranks == 1 ? "" : "s", seconds, device.timing);
        for (const HostIssueMeasurement& host : set.host_issue) {
          fmt::print("The host issues {} in {:.1f} us (median; docs/host-issue.md)\n",
                     host.op ? fmt::format("a {} op", kOpClassNames.name(*host.op)) : std::string("any other op"),
                     host.median_ns() / 1e3);
        }
        if (set.kernel_gap) {
          fmt::print("The device starts a kernel queued behind another {:.2f} us after its end (median)\n",
                     set.kernel_gap->median_ns() / 1e3);
        }
        if (plan->scenario) print_unplaced(plan->scenario->unplaced, set.ranks);
        write_output("-o", flags.output, [&](std::ostream& out) { out << measurements_json(set).dump(1) << '\n'; });
        if (!flags.cluster_spec.empty()) write_cluster_spec(flags.cluster_spec, set);
      });
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto flags = std::make_shared<BenchFlags>();
  CLI::App* command = app.add_subcommand(
      "bench",
      "Run the microbenchmark suite on one backend and write the measurements (docs/calibration.md): GEMMs, "
      "attention forward and backward, the memory-bound op, and, under mpirun, collectives over message and group "
      "sizes and point-to-point messages; on a GPU, also the host's time to issue an op and, timed by CUPTI, the "
      "device's gap between kernels queued back to back (docs/host-issue.md). Every rank measures; rank 0 writes the "
      "file.");
  add_rank_flags(*command, flags->rank);
  command->add_flag("--quick", flags->quick, "A small suite of a few seconds, for tests");
  command->add_option("-o,--output", flags->output, "Measurement file to write (default measurements.json)")
      ->type_name("FILE");
  command->add_option("--parts", flags->parts, "Comma-separated parts: gemm, attention, memory, collectives, p2p")
      ->type_name("LIST");
  command
      ->add_option("--dtypes", flags->dtypes,
                   "Comma-separated dtypes of compute ops (default bf16,fp32 on cpu, bf16,fp16,fp32 on cuda)")
      ->type_name("LIST");
  command->add_option("--warmup", flags->warmup, "Untimed calls before each case's samples (default 1)")
      ->type_name("N");
  command->add_option("--samples", flags->samples, "Timed samples per case and rank (default 5, 3 with --quick)")
      ->type_name("N");
  command
      ->add_option(
          "--sample-ms", flags->sample_ms,
          "A sample repeats a short op back to back until it lasts this long, at most 1,000 calls (default "
          "0.2): the GPU runs at its full clock between idle samples; 50 or more keeps it at the clock it "
          "sustains under its power limit, as timing loops of 1,000 back-to-back calls do (docs/calibration.md)")
      ->type_name("MS");
  command
      ->add_option("--ranks-per-node", flags->ranks_per_node,
                   "Ranks per node, in rank order (default: the ranks MPI starts on this node): collectives are "
                   "measured inside a node, over whole nodes and one rank per node, and keyed by that placement")
      ->type_name("N");
  command
      ->add_option("--cluster-spec", flags->cluster_spec,
                   "Also write a cluster spec of the measured device (docs/calibration.md): one node of the job's "
                   "ranks, peaks and links as measured")
      ->type_name("FILE");
  command
      ->add_option("--scenario", flags->scenario,
                   "Time exactly the ops one iteration of this training scenario runs instead of the suite: its GEMMs "
                   "in their layouts, attention, memory-bound ops and, under mpirun, its collectives and sends over "
                   "the placements the job can form (docs/calibration.md); calibrate the file together with a suite's")
      ->type_name("FILE");
  command->callback([flags] { run_bench_command(*flags); });
}

}  // namespace weft::cli
