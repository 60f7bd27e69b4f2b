#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cost_models/comm_group.hpp"
#include "simulator/core/json_cursor.hpp"
#include "simulator/io/attention_balance_report.hpp"
#include "simulator/io/progress_bar.hpp"
#include "simulator/workload/modules/op_factory.hpp"
#include "simulator/workload/training_scenario.hpp"
#include "tools/weft/command_support.hpp"
#include "tools/weft/commands.hpp"
#include "tools/weft/flag_checks.hpp"
#include "tools/weft/list_flag.hpp"

namespace weft::cli {
namespace {

constexpr std::int64_t kMinTokens = 1024;     // the masks' spans are 1/64 of a sequence and more
constexpr std::int64_t kMaxTokens = 1 << 20;  // tiles per mask grow as the square
constexpr int kMaxMasks = 10000;
// Tiles a study may count, over all its masks: about 40 s on this project's 2-core machine.
constexpr double kMaxTileVisits = 4e9;

struct AttentionFlags {
  std::string scenario;
  std::optional<std::string> tokens;
  std::optional<std::string> masks_patterns;
  std::string distributions = "lpt,random,ring,zigzag";
  int masks = 50;
  std::uint64_t seed = 1;
  std::int64_t tile = 128;
  std::string calibration;
  std::string json_file;
};

// Throws InputError naming `flag` when a value repeats.
template <class Value>
void require_distinct(const char* flag, const std::vector<Value>& values, const std::vector<std::string>& names) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (values[i] == values[j]) throw InputError(std::string(flag) + ": '" + names[i] + "' is given twice");
    }
  }
}

// --tokens: whole tiles, at least two a rank (zigzag deals 2 cp chunks), distinct.
std::vector<std::int64_t> parse_tokens(const std::string& text, std::int64_t least, std::int64_t tile) {
  std::vector<std::int64_t> tokens;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    const std::string item = text.substr(begin, end - begin);
    std::size_t used = 0;
    std::int64_t value = 0;
    try {
      value = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || value < least || value > kMaxTokens || value % tile != 0) {
      throw InputError(fmt::format("--tokens: '{}' is not a multiple of {} tokens (the tile) from {} to {}", item, tile,
                                   least, kMaxTokens));
    }
    tokens.push_back(value);
    begin = end + 1;
  }
  std::vector<std::string> names;
  for (const std::int64_t value : tokens) names.push_back(std::to_string(value));
  require_distinct("--tokens", tokens, names);
  return tokens;
}

template <class Enum, std::size_t N>
std::vector<Enum> parse_distinct(const char* flag, const std::string& text, const EnumNames<Enum, N>& names) {
  const std::vector<Enum> values = parse_list_flag(flag, text, names);
  std::vector<std::string> texts;
  for (const Enum value : values) texts.emplace_back(names.name(value));
  require_distinct(flag, values, texts);
  return values;
}

// The sequence lengths to study: --tokens, else the scenario's (which must then be one --tokens takes).
std::vector<std::int64_t> study_lengths(const AttentionFlags& flags, const TrainingScenario& scenario) {
  const std::int64_t least = std::max(kMinTokens, 2 * flags.tile * scenario.parallel.cp);
  if (flags.tokens) return parse_tokens(*flags.tokens, least, flags.tile);
  const std::int64_t tokens = scenario.training.seq_len;
  if (tokens < least || tokens > kMaxTokens || tokens % flags.tile != 0) {
    throw InputError(
        fmt::format("{}: training.seq_len {} is not a multiple of {} tokens (the tile) from {} to {}: "
                    "give --tokens",
                    flags.scenario, tokens, flags.tile, least, kMaxTokens));
  }
  return {tokens};
}

// The all-gather of the whole sequence's keys and values over the scenario's first CP group.
double gather_seconds(const TrainingScenario& scenario, const ModelSpec& model, std::int64_t tokens) {
  ClusterCostModel cost(scenario.cluster);
  const ParallelPlan& plan = scenario.parallel;
  std::vector<std::int64_t> ranks;
  for (int c = 0; c < plan.cp; ++c) ranks.push_back(std::int64_t{c} * plan.tp);
  OpWork gather = communication_work(OpClass::allgather, tokens * 2 * (model.kv_heads / plan.tp) * model.head_dim() *
                                                             scenario.shard_context().element_bytes());
  gather.comm_group = cost.add_group(make_comm_group(CommGroupKind::cp, ranks, scenario.cluster));
  return static_cast<double>(cost.duration(gather, scenario.cluster.gpu)) / kNsPerSecond;
}

void run_attention(const AttentionFlags& flags) {
  check_output_paths({{"--json", &flags.json_file}}, {flags.scenario, flags.calibration});
  const JsonDocument document = JsonDocument::parse_file(flags.scenario);
  const TrainingScenario scenario = with_context(
      flags.scenario, [&] { return load_training_scenario(document.root(), read_calibration(flags.calibration)); });
  check_calibration_device(flags.calibration, scenario.cluster);
  const ParallelPlan& plan = scenario.parallel;
  if (plan.cp < 2) {
    throw InputError(flags.scenario +
                     ": parallel.cp is 1: weft attention splits a sequence over a context-parallel group (cp 2 or "
                     "more)");
  }
  const ModelSpec& model = scenario.model.modules.back().model;  // the language model, whose sequence is masked

  if (model.attention == AttentionKernel::unfused || scenario.shard_context().kernels.attention == Kernel::unfused) {
    throw InputError(flags.scenario + ": stack '" + scenario.stack.name +
                     "' runs unfused attention, which computes every score whatever the mask and however the tokens "
                     "are dealt: give a stack whose attention kernel is fused");
  }

  const BalanceStudy study{
      .ranks = plan.cp,
      .tile = flags.tile,
      .masks = flags.masks,
      .seed = flags.seed,
      .distributions = parse_distinct("--distribution", flags.distributions, kTokenDistributionNames)};
  // The scenario's own mask, else Cornstarch's three.
  const std::string patterns = flags.masks_patterns ? *flags.masks_patterns
                               : scenario.training.attention_mask
                                   ? std::string(kMaskPatternNames.name(*scenario.training.attention_mask))
                                   : "ep,ee,mp";
  std::vector<BalanceCase> cases;
  double tile_visits = 0.0;
  for (const std::int64_t tokens : study_lengths(flags, scenario)) {
    for (const MaskPattern pattern : parse_distinct("--mask", patterns, kMaskPatternNames)) {
      cases.push_back({pattern, tokens});
      tile_visits += static_cast<double>(flags.masks) * std::pow(static_cast<double>(tokens / flags.tile), 2);
    }
  }
  if (tile_visits > kMaxTileVisits) {
    throw InputError(
        fmt::format("--masks, --tokens, --tile: the study would count {:.2g} tiles of the masks, more "
                    "than {:.0e}: fewer masks or shorter sequences, or larger tiles",
                    tile_visits, kMaxTileVisits));
  }

  BalanceSubject subject{
      .scenario = flags.scenario,
      .layer = fmt::format("{}'s attention layer, {} of {} query heads and {} of {} key-value heads a rank (tp {})",
                           model.name, model.heads / plan.tp, model.heads, model.kv_heads / plan.tp, model.kv_heads,
                           plan.tp),
      .gpu = scenario.cluster.gpu.name,
      .dtype = std::string(kDtypeNames.name(scenario.training.dtype)),
      .gather_s = {}};
  for (const BalanceCase& balance_case : cases)
    subject.gather_s.push_back(gather_seconds(scenario, model, balance_case.tokens));

  const ClusterCostModel cost(scenario.cluster);
  const BalanceLayer layer{
      .model = model, .context = scenario.shard_context(), .cost = cost, .gpu = scenario.cluster.gpu};
  ProgressBar bar("timing masks");
  const std::vector<BalanceRow> rows =
      run_balance_study(study, cases, layer, [&](std::size_t done, std::size_t total) { bar.update(done, total); });
  fmt::print("{}", render_balance_report(subject, study, rows));
  if (!flags.json_file.empty()) {
    write_output("--json", flags.json_file,
                 [&](std::ostream& out) { out << balance_json(subject, study, rows).dump(2) << '\n'; });
  }
}

}  // namespace

void add_attention_command(CLI::App& app) {
  auto flags = std::make_shared<AttentionFlags>();
  CLI::App* command = app.add_subcommand(
      "attention",
      "Time one attention layer on the ranks of the scenario's context-parallel group, for random multimodal "
      "attention masks and each way of dealing a sequence's tokens to the ranks (Cornstarch, papers/004 §4.3 and "
      "Table 4): the masks as bitfield attention masks, each rank's attention over the tiles of the mask its queries "
      "touch, and the slowest rank's time, averaged over the masks.\nMasks: ep (encoder outputs prepended), ee "
      "(encoder outputs embedded), mp (multimodal packing), document (prefix-LM documents), causal. Distributions: "
      "lpt (Cornstarch's workload balance), random, ring (contiguous), zigzag (docs/context-parallel.md).");
  command->add_option("SCENARIO", flags->scenario, "Training scenario JSON file (its model, GPU, tp, cp and dtype)")
      ->required();
  command->add_option("--tokens", flags->tokens, "Sequence lengths, comma-separated (default: training.seq_len)")
      ->type_name("N,...");
  command->add_option("--mask", flags->masks_patterns,
                      "Mask patterns, comma-separated: ep, ee, mp, document, causal (default: training.attention_mask, "
                      "else ep,ee,mp)");
  command->add_option("--distribution", flags->distributions, "Token distributions, comma-separated")
      ->capture_default_str();
  command->add_option("--masks", flags->masks, "Random masks per row")
      ->check(integer_from(1, kMaxMasks))
      ->capture_default_str();
  command->add_option("--seed", flags->seed, "Seed of the masks and of the random distribution")
      ->check(integer_from(0))
      ->capture_default_str();
  command->add_option("--tile", flags->tile, "Tokens per side of the attention kernel's tile (FlexAttention: 128)")
      ->check(integer_from(16, 4096))
      ->capture_default_str();
  add_calibration_flag(*command, flags->calibration);
  command->add_option("--json", flags->json_file, "Write the rows as JSON to this file");
  command->callback([flags] { run_attention(*flags); });
}

}  // namespace weft::cli
