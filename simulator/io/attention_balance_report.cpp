#include "simulator/io/attention_balance_report.hpp"

#include <fmt/format.h>

#include "simulator/io/text_table.hpp"

namespace weft {
namespace {

std::string as_ms(double seconds) { return fmt::format("{:.2f}", seconds * 1e3); }

// One table: a row per case, a column per distribution, `time` of each outcome.
template <class Time>
std::string outcome_table(const BalanceStudy& study, const std::vector<BalanceRow>& rows, bool with_imbalance,
                          Time time) {
  TextTable table;
  table.add_column("tokens", TextTable::Align::right);
  table.add_column("mask", TextTable::Align::left);
  table.add_column("tiles", TextTable::Align::right);
  table.add_column("partial", TextTable::Align::right);
  for (const TokenDistribution distribution : study.distributions) {
    table.add_column(std::string(kTokenDistributionNames.name(distribution)), TextTable::Align::right);
  }
  for (const BalanceRow& row : rows) {
    std::vector<std::string> cells{
        std::to_string(row.study.tokens), std::string(kMaskPatternNames.name(row.study.pattern)),
        fmt::format("{:.1f}%", 100.0 * row.density), fmt::format("{:.1f}%", 100.0 * row.partial)};
    for (const DistributionOutcome& outcome : row.outcomes) {
      cells.push_back(with_imbalance ? fmt::format("{} ({:.2f})", as_ms(time(outcome)), outcome.tile_imbalance)
                                     : as_ms(time(outcome)));
    }
    table.add_row(std::move(cells));
  }
  return table.render("  ");
}

}  // namespace

std::string render_balance_report(const BalanceSubject& subject, const BalanceStudy& study,
                                  const std::vector<BalanceRow>& rows) {
  std::string out = fmt::format(
      "weft attention {}\n  {}, context parallel over {} ranks, on {} ({}); {} random mask{} per row, tiles of {} "
      "tokens\n\n",
      subject.scenario, subject.layer, study.ranks, subject.gpu, subject.dtype, study.masks,
      study.masks == 1 ? "" : "s", study.tile);
  out += "Forward, the slowest rank, ms (mean over the masks); in brackets its tiles over the ranks' mean:\n";
  out += outcome_table(study, rows, true, [](const DistributionOutcome& o) { return o.forward_s; });
  out += "\nForward and backward, the slowest rank of each, ms:\n";
  out += outcome_table(study, rows, false, [](const DistributionOutcome& o) { return o.forward_s + o.backward_s; });
  out +=
      "\ntiles: the share of the mask's tiles that hold a query attending a key; partial: the share of those "
      "where some query does not attend some key, which a kernel masks element by element.\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (i > 0 && rows[i - 1].study.tokens == rows[i].study.tokens) continue;
    out += fmt::format(
        "{} tokens: the keys' and values' all-gather over the group takes {} ms a layer, under every distribution "
        "(not in the times above).\n",
        rows[i].study.tokens, as_ms(subject.gather_s[i]));
  }
  return out;
}

nlohmann::json balance_json(const BalanceSubject& subject, const BalanceStudy& study,
                            const std::vector<BalanceRow>& rows) {
  nlohmann::json out;
  out["scenario"] = subject.scenario;
  out["layer"] = subject.layer;
  out["gpu"] = subject.gpu;
  out["dtype"] = subject.dtype;
  out["ranks"] = study.ranks;
  out["tile"] = study.tile;
  out["masks"] = study.masks;
  out["seed"] = study.seed;
  out["rows"] = nlohmann::json::array();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const BalanceRow& row = rows[i];
    nlohmann::json entry;
    entry["tokens"] = row.study.tokens;
    entry["mask"] = kMaskPatternNames.name(row.study.pattern);
    entry["tile_density"] = row.density;
    entry["partial_tiles"] = row.partial;
    entry["gather_s"] = subject.gather_s[i];
    for (const DistributionOutcome& outcome : row.outcomes) {
      entry["distributions"][std::string(kTokenDistributionNames.name(outcome.distribution))] = {
          {"forward_s", outcome.forward_s},
          {"backward_s", outcome.backward_s},
          {"tile_imbalance", outcome.tile_imbalance}};
    }
    out["rows"].push_back(std::move(entry));
  }
  return out;
}

}  // namespace weft
