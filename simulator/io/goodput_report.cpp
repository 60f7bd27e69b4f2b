#include "simulator/io/goodput_report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "simulator/core/format_units.hpp"
#include "simulator/core/units.hpp"
#include "simulator/io/csv.hpp"
#include "simulator/io/text_table.hpp"
#include "simulator/resilience/goodput_summary.hpp"

namespace weft {
namespace {

std::string format_rate(double tokens_per_s) {
  if (tokens_per_s >= 1e6) return fmt::format("{:.3f} M tokens/s", tokens_per_s / 1e6);
  return fmt::format("{:.0f} tokens/s", tokens_per_s);
}

std::string describe_checkpoints(const GoodputStudy& study, const GoodputSummary& summary) {
  const CheckpointPolicy& checkpoint = study.setup.recovery.checkpoint;
  const std::string size = format_bytes(static_cast<Bytes>(checkpoint.bytes));
  if (!checkpoint.enabled) return fmt::format("none ({} to reload the job's state)", size);
  if (checkpoint.mode == CheckpointMode::sync) {
    return fmt::format("{}, synchronous: training stops {} for each", size, format_span(summary.checkpoint_stall_s));
  }
  return fmt::format("{}, asynchronous: training stops {} for each snapshot, written in {}", size,
                     format_span(summary.checkpoint_stall_s), format_span(summary.checkpoint_durable_s));
}

// Slowdowns of cause `c`: how often, how long, how slow, and the job's rate when they hit each
// pipeline stage (the slowest and fastest of them).
std::string describe_slowdown(const RunSetup& setup, std::size_t c) {
  const SlowdownCause& cause = setup.failures.slowdowns[c];
  const std::vector<double>& rates = setup.slowdown_rates[c];
  const auto [low, high] = std::minmax_element(rates.begin(), rates.end());
  const std::string pace = *low == *high ? fmt::format("{:.1f}%", *low * 100.0)
                                         : fmt::format("{:.1f}% to {:.1f}%", *low * 100.0, *high * 100.0);
  return fmt::format(
      "{}: every {} on the job's nodes, for {}, a GPU at {:.0f}% speed: the job at {} of its rate "
      "(by the stage hit)",
      cause.name, format_span(1.0 / (cause.rate_per_node_s * static_cast<double>(setup.job_nodes))),
      format_span(cause.duration_s), cause.speed * 100.0, pace);
}

// Planned stops of cause `c`: how often the job makes one, and for how long it stays stopped.
std::string describe_planned(const RunSetup& setup, std::size_t c) {
  const PlannedCause& cause = setup.failures.planned[c];
  const double every_s = 1.0 / (cause.rate_per_node_s * static_cast<double>(setup.job_nodes));
  return fmt::format("{}: every {} ({:.2f} a day), the job checkpoints{} and restarts", cause.name,
                     format_span(every_s), kSecondsPerDay / every_s,
                     cause.downtime_s > 0.0 ? fmt::format(", stops {}", format_span(cause.downtime_s)) : "");
}

// A job that checkpoints when a failure is announced: how long ahead, and whether its write fits.
std::string describe_notice(const RunSetup& setup, const GoodputSummary& summary) {
  const double notice_s = setup.failures.notice_s;
  if (!setup.recovery.checkpoint.on_notice || notice_s <= 0.0) return "";
  return fmt::format("; also on each failure's notice, {} ahead, {}", format_span(notice_s),
                     summary.checkpoint_durable_s <= notice_s
                         ? "which the write fits"
                         : "too short for the write (the job falls back to its last checkpoint)");
}

std::string describe_interval(const GoodputStudy& study, const GoodputSummary& summary) {
  const CheckpointPolicy& checkpoint = study.setup.recovery.checkpoint;
  if (!checkpoint.enabled) return "no checkpoints";
  const std::string formulas =
      std::isfinite(summary.mtbf_s)
          ? fmt::format("Young {}, Daly {}", format_span(summary.young_interval_s),
                        format_span(summary.daly_interval_s))
          : (study.setup.failures.trace.empty() ? "nothing fails" : "no failure rate for Young's and Daly's");
  if (!std::isfinite(study.setup.checkpoint_work_s())) return fmt::format("only the trained model ({})", formulas);
  const std::string interval = format_span(study.setup.checkpoint_work_s());
  if (!study.search) return fmt::format("every {} of training ({})", interval, formulas);
  return fmt::format("every {} of training, the best of {} intervals tried ({})", interval, study.search->trials.size(),
                     formulas);
}

std::string describe_recovery(const GoodputStudy& study) {
  const RunSetup& setup = study.setup;
  if (setup.varuna) {
    const auto& layout = setup.varuna->best(static_cast<int>(setup.job_nodes));
    return fmt::format(
        "varuna: checkpoint-restart onto the nodes left, in the fastest layout they hold of {} pipeline "
        "depths (at least {} nodes; on all {}: pp {} x dp {}, {} samples an iteration){}",
        setup.varuna->depths().size(), setup.varuna->min_nodes(), setup.job_nodes, layout->pp, layout->dp,
        layout->samples,
        setup.recovery.morph_on_return ? "; morphs again when nodes back from repair make a faster layout"
                                       : "; nodes back from repair join at the next restart");
  }
  if (setup.bamboo) {
    const BambooPlanner& planner = *setup.bamboo;
    const auto pipelines = setup.job_nodes / planner.nodes_per_pipeline();
    return fmt::format(
        "bamboo: redundant computation in {} pipelines of {} stages ({} samples an iteration); a lost stage is run by "
        "the node before it after a pause of {}, two lost side by side restart the job from its checkpoint",
        pipelines, planner.pp(), planner.samples(static_cast<int>(pipelines)),
        format_span(setup.recovery.reconfigure_s));
  }
  if (!setup.oobleck) return "checkpoint-restart";
  OobleckPlanner& planner = *setup.oobleck;
  const auto& templates = planner.templates();
  std::string pipelines;
  if (const auto& plan = planner.best(static_cast<int>(setup.job_nodes))) {
    for (std::size_t i = 0; i < plan->pipelines.size(); ++i) {
      pipelines += fmt::format("{}{}", i == 0 ? "" : " + ", plan->pipelines[i]);
    }
  }
  return fmt::format(
      "oobleck, f = {}: templates of {} to {} nodes (n0 = {}), {} nodes as pipelines of {}; a rebuild takes {} "
      "besides copying model states",
      planner.f(), templates.front().nodes, templates.back().nodes, planner.n0(), setup.job_nodes, pipelines,
      format_span(setup.recovery.reconfigure_s));
}

std::string spread_row_number(double value, int decimals) { return fmt::format("{:.{}f}", value, decimals); }

}  // namespace

std::string format_span(double seconds) {
  if (!std::isfinite(seconds)) return "never";
  if (seconds < 2 * kSecondsPerMinute) return fmt::format("{:.1f} s", seconds);
  if (seconds < 2 * kSecondsPerHour) return fmt::format("{:.1f} min", seconds / kSecondsPerMinute);
  if (seconds < 2 * kSecondsPerDay) return fmt::format("{:.2f} h", seconds / kSecondsPerHour);
  return fmt::format("{:.1f} days", seconds / kSecondsPerDay);
}

std::string render_goodput_report(const GoodputSubject& subject, const GoodputStudy& study) {
  const RunSetup& setup = study.setup;
  const GoodputSummary summary = summarize(study);
  std::string out = fmt::format("weft goodput {} {}\n", subject.scenario, subject.resilience);
  if (!subject.description.empty()) out += subject.description + "\n";
  out += fmt::format("Healthy run      iteration {} (simulated), {} on {} GPUs ({} nodes, {} hot spares)\n",
                     format_seconds(setup.iteration_s), format_rate(summary.healthy_tokens_per_s), setup.job_gpus,
                     setup.job_nodes, setup.recovery.hot_spare_nodes);
  const std::size_t traced = setup.failures.trace.size();
  out += fmt::format("Failures         job MTBF {} ({:.2f} interruptions a day, every node in service){}{}\n",
                     format_span(summary.mtbf_s), kSecondsPerDay / summary.mtbf_s,
                     traced == 0 ? "" : fmt::format(", and {} events of a trace", traced),
                     subject.failure_source.empty() ? "" : "; " + subject.failure_source);
  for (std::size_t c = 0; c < setup.failures.slowdowns.size(); ++c) {
    out += fmt::format("Slowdowns        {}\n", describe_slowdown(setup, c));
  }
  for (std::size_t c = 0; c < setup.failures.planned.size(); ++c) {
    out += fmt::format("Planned stops    {}\n", describe_planned(setup, c));
  }
  out += fmt::format("Recovery         {}\n", describe_recovery(study));
  out += fmt::format("Checkpoints      {}{}\n", describe_checkpoints(study, summary), describe_notice(setup, summary));
  out += fmt::format("Interval         {}\n", describe_interval(study, summary));
  out += fmt::format("Restart          {} (restart {}, reload {})\n", format_span(summary.restart_s),
                     format_span(setup.recovery.restart_s), format_span(setup.recovery.reload_s()));

  out += fmt::format("\n{} runs of {} (seeds {}-{}):\n", study.seeds,
                     setup.target_tokens
                         ? fmt::format("{:.4g} tokens, at most {}", *setup.target_tokens, format_span(setup.horizon_s))
                         : format_span(setup.horizon_s),
                     study.first_seed, study.first_seed + static_cast<std::uint64_t>(study.seeds) - 1);
  TextTable table;
  table.add_column("", TextTable::Align::left);
  for (const char* header : {"mean", "p5", "p50", "p95"}) table.add_column(header, TextTable::Align::right);
  const auto add = [&](std::string name, const Spread& spread, double scale, int decimals) {
    table.add_row({std::move(name), spread_row_number(spread.mean * scale, decimals),
                   spread_row_number(spread.p5 * scale, decimals), spread_row_number(spread.p50 * scale, decimals),
                   spread_row_number(spread.p95 * scale, decimals)});
  };
  add("goodput (M tokens/s)", summary.goodput_tokens_per_s, 1e-6, 3);
  add("of the healthy run (%)", summary.healthy_share, 100.0, 1);
  if (setup.target_tokens) add("days to train and save", summary.wall_days, 1.0, 2);
  add("interruptions", summary.interruptions, 1.0, 1);
  // Checkpoint-restart does not reconfigure, and runs degraded only through slowdowns: those rows
  // are Oobleck's, Varuna's and Bamboo's (Varuna's reconfigurations are its morphs onto nodes back
  // from repair; its restarts after failures count as interruptions).
  const bool reshapes = setup.oobleck || setup.varuna || setup.bamboo;
  if (reshapes) add("reconfigurations", summary.reconfigurations, 1.0, 1);
  const bool planned = !setup.failures.planned.empty();
  if (planned) add("planned stops", summary.planned_stops, 1.0, 1);
  add("checkpoints written", summary.checkpoints, 1.0, 0);
  for (std::size_t i = 0; i < kTimeCategories; ++i) {
    const auto category = static_cast<TimeCategory>(i);
    if ((category == TimeCategory::reconfiguration && !reshapes) ||
        (category == TimeCategory::degraded && !reshapes && setup.failures.slowdowns.empty()) ||
        (category == TimeCategory::maintenance && !planned)) {
      continue;
    }
    add(fmt::format("{} (h)", kTimeCategoryNames[i]), summary.hours[i], 1.0, 1);
  }
  out += table.render("  ");
  if (summary.unfinished > 0) {
    out += fmt::format("{} of {} runs did not train {:.4g} tokens within {}: their rows count them at that limit\n",
                       summary.unfinished, study.seeds, *setup.target_tokens, format_span(setup.horizon_s));
  }
  return out;
}

nlohmann::json goodput_json(const GoodputSubject& subject, const GoodputStudy& study) {
  const RunSetup& setup = study.setup;
  const GoodputSummary summary = summarize(study);
  const auto spread = [](const Spread& s) {
    return nlohmann::json{{"mean", s.mean}, {"p5", s.p5}, {"p50", s.p50}, {"p95", s.p95}};
  };
  const auto number_or_null = [](double value) { return std::isfinite(value) ? nlohmann::json(value) : nullptr; };
  nlohmann::json out{
      {"scenario", subject.scenario},
      {"resilience", subject.resilience},
      {"iteration_time_s", setup.iteration_s},
      {"tokens_per_iteration", setup.tokens_per_iteration},
      {"gpus", setup.job_gpus},
      {"nodes", setup.job_nodes},
      {"hot_spare_nodes", setup.recovery.hot_spare_nodes},
      {"job_mtbf_s", number_or_null(summary.mtbf_s)},
      {"checkpoint_bytes", setup.recovery.checkpoint.bytes},
      {"checkpoint_stall_s", summary.checkpoint_stall_s},
      {"checkpoint_durable_s", summary.checkpoint_durable_s},
      {"restart_s", summary.restart_s},
      {"checkpoint_interval_s",
       setup.recovery.checkpoint.enabled ? number_or_null(setup.checkpoint_work_s()) : nlohmann::json(nullptr)},
      {"young_interval_s", number_or_null(summary.young_interval_s)},
      {"daly_interval_s", number_or_null(summary.daly_interval_s)},
      {"horizon_s", setup.horizon_s},
      {"target_tokens", setup.target_tokens ? nlohmann::json(*setup.target_tokens) : nlohmann::json(nullptr)},
      {"first_seed", study.first_seed},
      {"seeds", study.seeds},
      {"goodput_tokens_per_s", spread(summary.goodput_tokens_per_s)},
      {"healthy_share", spread(summary.healthy_share)},
      {"policy", kRecoveryKindNames.name(setup.recovery.kind)},
      {"interruptions", spread(summary.interruptions)},
      {"reconfigurations", spread(summary.reconfigurations)},
      {"checkpoints", spread(summary.checkpoints)},
      {"planned_stops", spread(summary.planned_stops)},
      {"wall_days", spread(summary.wall_days)},
      {"unfinished_runs", summary.unfinished},
  };
  for (std::size_t i = 0; i < summary.hours.size(); ++i) {
    out["hours"][std::string(kTimeCategoryNames[i])] = spread(summary.hours[i]);
  }
  out["planned"] = nlohmann::json::array();
  for (const PlannedCause& cause : setup.failures.planned) {
    out["planned"].push_back(
        {{"name", cause.name}, {"rate_per_node_s", cause.rate_per_node_s}, {"downtime_s", cause.downtime_s}});
  }
  out["slowdowns"] = nlohmann::json::array();
  for (std::size_t c = 0; c < setup.failures.slowdowns.size(); ++c) {
    const SlowdownCause& cause = setup.failures.slowdowns[c];
    out["slowdowns"].push_back({{"name", cause.name},
                                {"rate_per_node_s", cause.rate_per_node_s},
                                {"duration_s", cause.duration_s},
                                {"speed", cause.speed},
                                {"job_rate_by_stage", setup.slowdown_rates[c]}});
  }
  if (study.search) {
    out["interval_search"] = nlohmann::json::array();
    for (const IntervalTrial& trial : study.search->trials) {
      out["interval_search"].push_back(
          {{"interval_s", trial.interval_s}, {"goodput_tokens_per_s", trial.goodput_tokens_per_s}});
    }
  }
  return out;
}

void write_goodput_csv(std::ostream& out, const GoodputStudy& study) {
  out << "seed,wall_s,goodput_tokens_per_s,trained_s,lost_s,checkpoint_s,restart_s,waiting_s,maintenance_s,"
         "reconfigure_s,degraded_s,interruptions,reconfigurations,checkpoints,planned_stops,reached_target\n";
  for (std::size_t i = 0; i < study.runs.size(); ++i) {
    const RunOutcome& run = study.runs[i];
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", study.first_seed + i,
                       csv_number(run.wall_s), csv_number(goodput_tokens_per_s(study.setup, run)),
                       csv_number(run.trained_s), csv_number(run.lost_s), csv_number(run.checkpoint_s),
                       csv_number(run.restart_s), csv_number(run.waiting_s), csv_number(run.maintenance_s),
                       csv_number(run.reconfigure_s), csv_number(run.degraded_s), run.interruptions,
                       run.reconfigurations, run.checkpoints, run.planned_stops,
                       study.setup.target_tokens ? (run.reached_target ? "true" : "false") : "");
  }
}

}  // namespace weft
