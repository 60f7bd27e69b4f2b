#include "simulator/io/goodput_html.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include <fmt/format.h>

#include "simulator/core/units.hpp"
#include "simulator/io/html_text.hpp"
#include "simulator/resilience/goodput_summary.hpp"

namespace weft {
namespace {

constexpr double kChartWidth = 720.0;
constexpr double kChartHeight = 260.0;
constexpr double kChartLeft = 70.0;
constexpr double kChartBottom = 30.0;
constexpr std::array<const char*, kTimeCategories> kCategoryColors = {"#4c78a8", "#e45756", "#f58518", "#b279a2",
                                                                      "#9d755d", "#eeca3b", "#54a24b", "#bab0ac"};

// Tokens trained (in billions) at each timeline point: mean, p5 and p95 over the runs.
struct Band {
  std::vector<double> mean, low, high;
};

Band timeline_band(const GoodputStudy& study) {
  Band band;
  const auto points = static_cast<std::size_t>(study.setup.timeline_points);
  const double tokens_per_s = study.setup.tokens_per_iteration / study.setup.iteration_s / 1e9;
  for (std::size_t i = 0; i < points; ++i) {
    std::vector<double> values;
    for (const RunOutcome& run : study.runs) values.push_back(run.timeline[i] * tokens_per_s);
    const Spread spread = spread_of(std::move(values));
    band.mean.push_back(spread.mean);
    band.low.push_back(spread.p5);
    band.high.push_back(spread.p95);
  }
  return band;
}

// The chart's x and y of `values[i]`, sampled at the i + 1-th of values.size() equal steps of the run.
std::string chart_point(std::size_t i, const std::vector<double>& values, double top) {
  const double fraction = static_cast<double>(i + 1) / static_cast<double>(values.size());
  return fmt::format("{:.1f},{:.1f} ", kChartLeft + fraction * (kChartWidth - kChartLeft - 10),
                     kChartHeight - kChartBottom - values[i] / top * (kChartHeight - kChartBottom - 10));
}

std::string progress_chart(const GoodputStudy& study) {
  const Band band = timeline_band(study);
  if (band.mean.empty()) return "<p>No timeline.</p>";
  const double horizon_days = study.setup.horizon_s / kSecondsPerDay;
  const double healthy_end = study.setup.tokens_per_iteration / study.setup.iteration_s * study.setup.horizon_s / 1e9;
  const double top = std::max(healthy_end, *std::max_element(band.high.begin(), band.high.end())) * 1.05;
  const double y0 = kChartHeight - kChartBottom;
  std::string band_points;
  for (std::size_t i = 0; i < band.high.size(); ++i) band_points += chart_point(i, band.high, top);
  for (std::size_t i = band.low.size(); i-- > 0;) band_points += chart_point(i, band.low, top);
  std::string mean_points;
  for (std::size_t i = 0; i < band.mean.size(); ++i) mean_points += chart_point(i, band.mean, top);

  std::string svg = fmt::format(R"(<svg width="{}" height="{}" role="img">)", kChartWidth, kChartHeight);
  svg += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#444"/>)", kChartLeft, y0, kChartWidth - 10);
  svg += fmt::format(R"(<line x1="{0}" y1="10" x2="{0}" y2="{1}" stroke="#444"/>)", kChartLeft, y0);
  svg += fmt::format(R"(<polygon points="{}" fill="#4c78a8" fill-opacity="0.25"/>)", band_points);
  svg += fmt::format(R"(<polyline points="{}" fill="none" stroke="#4c78a8" stroke-width="2"/>)", mean_points);
  svg += fmt::format(R"(<line x1="{}" y1="{}" x2="{:.1f}" y2="{:.1f}" stroke="#888" stroke-dasharray="4 3"/>)",
                     kChartLeft, y0, kChartWidth - 10, y0 - healthy_end / top * (kChartHeight - kChartBottom - 10));
  svg += fmt::format(R"(<text x="{}" y="16" class="tick" text-anchor="end">{:.0f}</text>)", kChartLeft - 4, top);
  svg += fmt::format(R"(<text x="{}" y="{}" class="tick" text-anchor="end">0</text>)", kChartLeft - 4, y0);
  svg += fmt::format(R"(<text x="{}" y="{}" class="tick" text-anchor="end">{:.1f} days</text>)", kChartWidth - 10,
                     kChartHeight - 8, horizon_days);
  svg += fmt::format(R"(<text x="4" y="{}" class="tick">B tokens</text>)", kChartHeight / 2);
  return svg + "</svg>";
}

std::string time_table(const GoodputSummary& summary) {
  double total = 0.0;
  for (const Spread& hours : summary.hours) total += hours.mean;
  std::string out = "<table><tr><th></th><th>hours (mean)</th><th>share</th><th>p5</th><th>p95</th></tr>";
  for (std::size_t i = 0; i < summary.hours.size(); ++i) {
    const Spread& hours = summary.hours[i];
    out += fmt::format(
        R"(<tr><td style="text-align:left"><span style="color:{}">&#9632;</span> {}</td><td>{:.1f}</td><td>{:.1f}%</td><td>{:.1f}</td><td>{:.1f}</td></tr>)",
        kCategoryColors[i], kTimeCategoryNames[i], hours.mean, total > 0 ? 100.0 * hours.mean / total : 0.0, hours.p5,
        hours.p95);
  }
  return out + "</table>";
}

std::string interval_table(const GoodputStudy& study) {
  if (!study.search) return "";
  std::string out =
      "<h2>Checkpoint intervals tried</h2><table><tr><th>interval</th><th>goodput (M tokens/s, mean)</th></tr>";
  for (const IntervalTrial& trial : study.search->trials) {
    const bool best = trial.interval_s == study.search->best_interval_s;
    out += fmt::format("<tr><td>{}{}</td><td>{:.4f}</td></tr>", html_escape(format_span(trial.interval_s)),
                       best ? " (best)" : "", trial.goodput_tokens_per_s / 1e6);
  }
  return out + "</table>";
}

}  // namespace

void write_goodput_html(std::ostream& out, const GoodputSubject& subject, const GoodputStudy& study) {
  const GoodputSummary summary = summarize(study);
  const std::string title = fmt::format("weft goodput: {} with {}", subject.scenario, subject.resilience);
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << html_escape(title)
      << "</title>\n<style>"
         "body{font-family:sans-serif;margin:24px;color:#222;max-width:1100px}"
         "h1{font-size:20px}h2{font-size:16px;margin-top:28px}"
         "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
         ".tick{font-size:11px}pre{font-size:12px}"
         "</style></head><body>\n";
  out << "<h1>" << html_escape(title) << "</h1>\n";
  if (!subject.description.empty()) out << "<p>" << html_escape(subject.description) << "</p>\n";
  out << "<pre>" << html_escape(render_goodput_report(subject, study)) << "</pre>\n";
  out << fmt::format(
      "<h2>Tokens trained over time</h2><p>Mean over {} runs (line), 5th to 95th percentile (band), and the healthy "
      "run without failures or checkpoints (dashed).</p>\n",
      study.seeds);
  out << progress_chart(study) << "\n";
  out << "<h2>Where the time went</h2>\n" << time_table(summary) << "\n";
  out << interval_table(study) << "\n</body></html>\n";
}

}  // namespace weft
