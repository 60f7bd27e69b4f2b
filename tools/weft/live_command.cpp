#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "kernels/backend_factory.hpp"
#include "kernels/live/live_executor.hpp"
#include "kernels/live/measured_trace.hpp"
#include "simulator/core/format_units.hpp"
#include "simulator/io/atomic_file.hpp"
#include "tools/weft/command_support.hpp"
#include "tools/weft/commands.hpp"
#include "tools/weft/mpi_command.hpp"

namespace weft::cli {
namespace {

struct LiveFlags {
  std::string plan;
  RankFlags rank;
  int warmup = 2;
  int iterations = 5;
  std::string trace_file;
};

struct LiveSetup {
  ExecutionPlan plan;
  BackendOptions backend;
  LiveOptions options;
};

LiveSetup prepare_live(const LiveFlags& flags, const cpu::MpiJob& job) {
  LiveSetup setup;
  setup.backend = backend_options(flags.rank, job);
  if (flags.warmup < 0) throw InputError("--warmup: expected 0 or more iterations");
  if (flags.iterations < 1) throw InputError("--iterations: expected at least 1 iteration");
  check_output_paths({{"--trace", &flags.trace_file}}, {flags.plan});
  const JsonDocument document = JsonDocument::parse_file(flags.plan);
  setup.plan = with_context(flags.plan, [&] { return read_execution_plan(document.root()); });
  with_context(flags.plan, [&] { LiveExecutor::check(setup.plan, job.size()); });
  setup.options = {flags.warmup, flags.iterations, timeout(flags.rank)};
  return setup;
}

std::vector<std::vector<TimedSpan>> gather_spans(Communicator& world, const std::vector<TimedSpan>& own) {
  std::vector<std::byte> bytes(own.size() * sizeof(TimedSpan));
  std::memcpy(bytes.data(), own.data(), bytes.size());
  std::vector<std::vector<TimedSpan>> all;
  for (const auto& part : world.gather_host(bytes, 0)) {
    std::vector<TimedSpan> spans(part.size() / sizeof(TimedSpan));
    std::memcpy(spans.data(), part.data(), spans.size() * sizeof(TimedSpan));
    all.push_back(std::move(spans));
  }
  return all;
}

// A stack's framework time per layer (docs/stacks.md) is in the plan as host ops, simulated and
// not run: weft live issues the kernels alone.
void report_framework(const ExecutionPlan& plan) {
  std::int64_t ops = 0;
  TimeNs total = 0;
  for (const PlanAction& action : plan.programs[static_cast<std::size_t>(plan.program_of_rank.front())].actions) {
    for (const PlanOp& op : action.ops) {
      if (op.work.op_class != OpClass::host || op.work.shape.size() != 1) continue;
      ++ops;
      total += op.work.shape[0];
    }
  }
  if (ops == 0) return;
  fmt::print("Framework        {} of the stack's framework time in {} ops on rank 0, simulated and not run here\n",
             format_duration(total), ops);
}

void report(const LiveFlags& flags, const LiveSetup& setup, const LiveRun& run, const Backend& backend) {
  const auto [fastest, slowest] = std::minmax_element(run.iteration_ns.begin(), run.iteration_ns.end());
  const std::int64_t median = run.iteration_ns[run.median_iteration];
  fmt::print("weft live {}: {} rank{} on {} ({} backend)\n", flags.plan, setup.plan.world_size(),
             setup.plan.world_size() == 1 ? "" : "s", backend.device().name, backend.device().backend);
  fmt::print("Iteration time   {} median of {} (min {}, max {}) after {} warm-up iteration{}\n",
             format_duration(median), run.iteration_ns.size(), format_duration(*fastest), format_duration(*slowest),
             setup.options.warmup, setup.options.warmup == 1 ? "" : "s");
  const double error = static_cast<double>(setup.plan.simulated_iteration_ns - median) / static_cast<double>(median);
  fmt::print("Simulated        {} ({:+.1f}% against the measured median)\n",
             format_duration(setup.plan.simulated_iteration_ns), 100.0 * error);
  fmt::print("Span timing      {}\n", backend.device().timing);
  report_framework(setup.plan);
  if (run.issued > 0) {
    fmt::print("Host issue       {} for {} ops and transfers on rank 0 ({} per op)\n", format_duration(run.issue_ns),
               run.issued, format_duration(run.issue_ns / static_cast<std::int64_t>(run.issued)));
  }
}

void run_live(const LiveFlags& flags) {
  auto setup = std::make_shared<LiveSetup>();
  run_on_ranks([&](cpu::MpiJob& job) { *setup = prepare_live(flags, job); },
               [&](cpu::MpiJob& job) {
                 const std::unique_ptr<Backend> backend = make_backend(setup->backend);
                 const std::unique_ptr<Communicator> world = backend->world_communicator(job.world());
                 LiveExecutor executor(setup->plan, *backend, *world, setup->options);
                 const LiveRun run = executor.run();
                 const auto spans = gather_spans(*world, run.spans);
                 if (job.rank() != 0) return;
                 report(flags, *setup, run, *backend);
                 if (flags.trace_file.empty()) return;
                 const MeasuredRunInfo info{backend->device().backend, backend->device().name, setup->options.warmup,
                                            run.iteration_ns, run.median_iteration};
                 write_output(
                     "--trace", flags.trace_file,
                     [&](std::ostream& out) { out << measured_trace_json(setup->plan, spans, info).dump() << '\n'; },
                     "(the median iteration's timeline; compare it with weft validate)");
               });
}

}  // namespace

void add_live_command(CLI::App& app) {
  auto flags = std::make_shared<LiveFlags>();
  CLI::App* command = app.add_subcommand(
      "live",
      "Run an execution plan (weft simulate --emit-plan) on real hardware, one MPI rank per plan rank "
      "(mpirun -np N weft live PLAN): real kernels with the plan's shapes, real collectives and transfers, warm-up "
      "iterations then timed ones; report the iteration time and write the measured timeline (docs/live.md).");
  command->add_option("PLAN", flags->plan, "Execution plan file")->required();
  add_rank_flags(*command, flags->rank);
  command->add_option("--warmup", flags->warmup, "Iterations before the timed ones (default 2)")->type_name("N");
  command->add_option("--iterations", flags->iterations, "Timed iterations (default 5)")->type_name("N");
  command
      ->add_option("--trace", flags->trace_file,
                   "Write the median iteration as Chrome Trace Event JSON, in the simulated trace's format")
      ->type_name("FILE");
  command->callback([flags] { run_live(*flags); });
}

}  // namespace weft::cli
