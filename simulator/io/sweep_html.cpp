#include "simulator/io/sweep_html.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "simulator/core/format_units.hpp"
#include "simulator/io/html_text.hpp"
#include "simulator/io/sweep_report_format.hpp"

namespace weft {
namespace {

constexpr std::size_t kChartPlans = 5;  // top plans drawn in the memory and time charts

// White to deep blue as `fraction` goes from 0 to 1.
std::string blue(double fraction) {
  fraction = std::clamp(fraction, 0.0, 1.0);
  const auto channel = [&](int light, int dark) { return static_cast<int>(light + (dark - light) * fraction); };
  return fmt::format("rgb({},{},{})", channel(240, 24), channel(244, 78), channel(255, 160));
}

std::vector<const PlanOutcome*> top_plans(const SweepResult& result, std::size_t count) {
  std::vector<const PlanOutcome*> plans;
  for (const PlanOutcome& plan : result.plans) {
    if (plan.status != PlanStatus::ok || plans.size() >= count) break;
    plans.push_back(&plan);
  }
  return plans;
}

// Best MFU for each (TP, PP); cells where every plan ran out of memory say OOM, cells whose plans
// that may fit were all pruned say so.
std::string heatmap(const SweepResult& result) {
  std::set<int> tps;
  std::set<int> pps;
  std::map<std::pair<int, int>, double> best;
  std::set<std::pair<int, int>> out_of_memory;
  std::set<std::pair<int, int>> pruned;
  double top_mfu = 0.0;
  for (const PlanOutcome& plan : result.plans) {
    const auto key = std::make_pair(plan.scenario.parallel.tp, plan.scenario.parallel.pp);
    tps.insert(key.first);
    pps.insert(key.second);
    if (plan.status == PlanStatus::ok) {
      best[key] = std::max(best[key], plan.report->mfu);
      top_mfu = std::max(top_mfu, plan.report->mfu);
    } else if (plan.status == PlanStatus::oom) {
      out_of_memory.insert(key);
    } else if (plan.status == PlanStatus::pruned) {
      pruned.insert(key);
    }
  }
  constexpr int kCell = 64, kLeft = 70, kTop = 30;
  const int width = kLeft + kCell * static_cast<int>(tps.size()) + 10;
  const int height = kTop + kCell * static_cast<int>(pps.size()) + 40;
  std::string svg = fmt::format(
      R"(<svg id="mfu-heatmap" xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}">)", width,
      height, width, height);
  svg += fmt::format(R"(<text x="{}" y="18" class="axis">TP</text>)", kLeft);
  svg += fmt::format(R"(<text x="4" y="{}" class="axis">PP</text>)", kTop + 16);
  int column = 0;
  for (int tp : tps) {
    svg += fmt::format(R"(<text x="{}" y="{}" class="tick" text-anchor="middle">{}</text>)",
                       kLeft + column++ * kCell + kCell / 2, height - 14, tp);
  }
  int row = 0;
  for (int pp : pps) {
    const int y = kTop + row++ * kCell;
    svg += fmt::format(R"(<text x="{}" y="{}" class="tick" text-anchor="end">{}</text>)", kLeft - 8, y + kCell / 2 + 4,
                       pp);
    column = 0;
    for (int tp : tps) {
      const int x = kLeft + column++ * kCell;
      const auto key = std::make_pair(tp, pp);
      std::string fill = "#eeeeee";
      std::string label;
      std::string kind = "none";
      if (auto it = best.find(key); it != best.end()) {
        fill = blue(top_mfu > 0 ? it->second / top_mfu : 0.0);
        label = format_percent(it->second);
        kind = "ok";
      } else if (pruned.contains(key)) {
        fill = "#dddddd";
        label = "pruned";
        kind = "pruned";
      } else if (out_of_memory.contains(key)) {
        fill = "url(#oom-hatch)";
        label = "OOM";
        kind = "oom";
      }
      svg += fmt::format(
          R"(<rect class="cell {}" x="{}" y="{}" width="{}" height="{}" fill="{}"><title>TP {} PP {}: {}</title></rect>)",
          kind, x + 1, y + 1, kCell - 2, kCell - 2, fill, tp, pp, label.empty() ? "no valid plan" : label);
      if (!label.empty()) {
        svg += fmt::format(R"(<text x="{}" y="{}" class="cell-label" text-anchor="middle">{}</text>)", x + kCell / 2,
                           y + kCell / 2 + 4, label);
      }
    }
  }
  svg +=
      R"svg(<defs><pattern id="oom-hatch" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="8" height="8" fill="#f3d6d6"/><line x1="0" y1="0" x2="0" y2="8" stroke="#c44" stroke-width="2"/></pattern></defs>)svg";
  svg += "</svg>";
  return svg;
}

// One small bar chart per top plan: each stage's peak memory against the GPU's capacity.
std::string memory_chart(const std::vector<const PlanOutcome*>& plans) {
  constexpr int kPanelWidth = 360, kPanelHeight = 150, kBarArea = 100;
  const int height = static_cast<int>(plans.size()) * kPanelHeight + 10;
  std::string svg = fmt::format(
      R"(<svg id="memory-per-stage" xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}">)",
      kPanelWidth + 160, height, kPanelWidth + 160, height);
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const PlanOutcome& plan = *plans[i];
    const int top = static_cast<int>(i) * kPanelHeight + 20;
    const double capacity = static_cast<double>(plan.memory_capacity);
    svg +=
        fmt::format(R"(<text x="0" y="{}" class="panel-title">#{} {}</text>)", top - 6, i + 1, html_escape(plan.label));
    const int stages = static_cast<int>(plan.stage_memory.size());
    const double bar = static_cast<double>(kPanelWidth) / std::max(1, stages);
    for (int s = 0; s < stages; ++s) {
      const double used = static_cast<double>(plan.stage_memory[static_cast<std::size_t>(s)]);
      const double h = std::min(1.0, used / capacity) * kBarArea;
      svg += fmt::format(
          R"(<rect class="memory-bar" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="#3a6ea5"><title>stage {}: {}</title></rect>)",
          s * bar + 1, top + kBarArea - h, std::max(1.0, bar - 2), h, s,
          format_bytes(plan.stage_memory[static_cast<std::size_t>(s)]));
    }
    svg +=
        fmt::format(R"(<line class="capacity" x1="0" x2="{}" y1="{}" y2="{}" stroke="#c44" stroke-dasharray="4 3"/>)",
                    kPanelWidth, top, top);
    svg += fmt::format(R"(<text x="{}" y="{}" class="tick">{} capacity</text>)", kPanelWidth + 6, top + 4,
                       format_bytes(plan.memory_capacity));
    svg += fmt::format(R"(<text x="{}" y="{}" class="tick">peak {}</text>)", kPanelWidth + 6, top + 20,
                       format_bytes(plan.peak_memory()));
  }
  svg += "</svg>";
  return svg;
}

// A stacked bar per top plan: compute, communication no compute hides by group, and bubble,
// averaged over its pipeline stages.
std::string time_chart(const std::vector<const PlanOutcome*>& plans) {
  struct Part {
    const char* name;
    const char* color;
  };
  const std::array<Part, 6> parts{{{"compute", "#3a6ea5"},
                                   {"tp", "#e3a33b"},
                                   {"cp", "#9b59b6"},
                                   {"pp", "#2a9d8f"},
                                   {"dp", "#c0504d"},
                                   {"bubble", "#bbbbbb"}}};
  constexpr int kBarWidth = 480, kRow = 34, kLeft = 40;
  const int height = static_cast<int>(plans.size()) * kRow + 50;
  std::string svg = fmt::format(
      R"(<svg id="time-breakdown" xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}">)",
      kLeft + kBarWidth + 20, height, kLeft + kBarWidth + 20, height);
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const TimeShares shares = time_shares(*plans[i]->report);
    const std::array<double, 6> values{shares.compute,
                                       shares.exposed_by_group[static_cast<std::size_t>(CommGroupKind::tp)],
                                       shares.exposed_by_group[static_cast<std::size_t>(CommGroupKind::cp)],
                                       shares.exposed_by_group[static_cast<std::size_t>(CommGroupKind::pp)],
                                       shares.exposed_by_group[static_cast<std::size_t>(CommGroupKind::dp)] +
                                           shares.exposed_by_group[static_cast<std::size_t>(CommGroupKind::embedding)],
                                       shares.bubble};
    const int y = static_cast<int>(i) * kRow + 10;
    svg += fmt::format(R"(<text x="0" y="{}" class="tick">#{}</text>)", y + 17, i + 1);
    double x = kLeft;
    for (std::size_t p = 0; p < parts.size(); ++p) {
      const double w = values[p] * kBarWidth;
      if (w <= 0) continue;
      svg += fmt::format(
          R"(<rect class="time-part {}" x="{:.1f}" y="{}" width="{:.1f}" height="24" fill="{}"><title>{}: {}</title></rect>)",
          parts[p].name, x, y, w, parts[p].color, parts[p].name, format_percent(values[p]));
      x += w;
    }
  }
  const int legend = static_cast<int>(plans.size()) * kRow + 30;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const int x = kLeft + static_cast<int>(p) * 80;
    svg += fmt::format(
        R"(<rect x="{}" y="{}" width="12" height="12" fill="{}"/><text x="{}" y="{}" class="tick">{}</text>)", x,
        legend, parts[p].color, x + 16, legend + 11, parts[p].name);
  }
  svg += "</svg>";
  return svg;
}

std::string table(const std::vector<const PlanOutcome*>& plans) {
  std::string html =
      "<table><thead><tr><th>rank</th><th>plan</th><th>iteration</th><th>tokens/s</th><th>MFU</th>"
      "<th>TFLOP/s/GPU</th><th>peak memory</th><th>bubble</th><th>exposed comm</th></tr></thead><tbody>";
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const TrainingReport& report = *plans[i]->report;
    const TimeShares shares = time_shares(report);
    html += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.0f}</td><td>{}</td><td>{:.1f}</td><td>{}</td><td>{}</td>"
        "<td>{}</td></tr>",
        i + 1, html_escape(plans[i]->label),
        format_duration(static_cast<TimeNs>(report.iteration_time_s * kNsPerSecond)), report.tokens_per_s,
        format_percent(report.mfu), report.tflops_per_gpu, format_bytes(plans[i]->peak_memory()),
        format_percent(shares.bubble), format_percent(shares.exposed_comm));
  }
  return html + "</tbody></table>";
}

}  // namespace

void write_sweep_html(std::ostream& out, const TrainingScenario& base, int gpus, const SweepResult& result,
                      std::size_t top) {
  const auto plans = top_plans(result, top);
  const auto charted = top_plans(result, std::min(top, kChartPlans));
  const std::string title = fmt::format("weft sweep: {} on {} GPUs of {}", base.model.name, gpus, base.cluster.name);
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << html_escape(title)
      << "</title>\n<style>"
         "body{font-family:sans-serif;margin:24px;color:#222;max-width:1100px}"
         "h1{font-size:20px}h2{font-size:16px;margin-top:28px}"
         "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
         "td:nth-child(2),th:nth-child(2){text-align:left}"
         ".axis{font-size:13px;font-weight:bold}.tick{font-size:11px}.cell-label{font-size:11px}"
         ".panel-title{font-size:12px}"
         "</style></head><body>\n";
  out << "<h1>" << html_escape(title) << "</h1>\n";
  out << fmt::format(
      "<p>{} samples of {} tokens per iteration. {} plans considered: {} invalid, {} out of memory, "
      "{} simulated, {} fit.{}</p>\n",
      base.training.global_batch, base.training.seq_len, result.considered, result.invalid, result.out_of_memory,
      result.simulated, result.feasible,
      result.pruned == 0 ? ""
                         : fmt::format(" {} plans were not simulated: their compute alone is slower than the top {} "
                                       "(pruned); the heatmap shows the best simulated plan of each cell, and "
                                       "--all simulates every plan.",
                                       result.pruned, top));
  out << "<h2>Best MFU for each TP x PP</h2>\n" << heatmap(result) << "\n";
  if (plans.empty()) {
    out << "<p>No plan fits.</p></body></html>\n";
    return;
  }
  out << "<h2>Peak memory per pipeline stage, top plans</h2>\n" << memory_chart(charted) << "\n";
  out << "<h2>Where the iteration goes, top plans (averaged over stages)</h2>\n" << time_chart(charted) << "\n";
  out << "<h2>Top plans</h2>\n" << table(plans) << "\n</body></html>\n";
}

}  // namespace weft
