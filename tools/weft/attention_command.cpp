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
#include "tools/weft/list_flag.hpp"

namespace weft::cli {
namespace {

constexpr std::int64_t kMinTokens = 1024;     // the masks' spans are 1/64 of a sequence and more
constexpr std::int64_t kMaxTokens = 1 << 20;  // tiles per mask grow as the square
constexpr int kMaxMasks = 10000;

struct AttentionFlags {
  std::string scenario;
  std::string tokens;
  std::string masks_patterns;
  std::string distributions = "lpt,random,ring,zigzag";
  int masks = 50;
  std::uint64_t seed = 1;
  std::int64_t tile = 128;
  std::string calibration;
  std::string json_file;
};

std::vector<std::int64_t> parse_tokens(const std::string& text, std::int64_t least) {
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
    if (used == 0 || used != item.size() || value < least || value > kMaxTokens) {
      throw InputError(
          fmt::format("--tokens: '{}' is not a whole number of tokens from {} to {}", item, least, kMaxTokens));
    }
    tokens.push_back(value);
    begin = end + 1;
  }
  return tokens;
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
  check_output_paths({{"--json", &flags.json_file}});
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

  const BalanceStudy study{
      .ranks = plan.cp,
      .tile = flags.tile,
      .masks = flags.masks,
      .seed = flags.seed,
      .distributions = parse_list_flag("--distribution", flags.distributions, kTokenDistributionNames)};
  const std::int64_t least = std::max(kMinTokens, flags.tile * plan.cp);
  std::vector<std::int64_t> lengths{scenario.training.seq_len};
  if (!flags.tokens.empty()) {
    lengths = parse_tokens(flags.tokens, least);
  } else if (lengths.front() < least || lengths.front() > kMaxTokens) {
    throw InputError(fmt::format("{}: training.seq_len {} is not {} to {} tokens: give --tokens", flags.scenario,
                                 lengths.front(), least, kMaxTokens));
  }
  // The scenario's own mask, else Cornstarch's three.
  const std::string patterns = !flags.masks_patterns.empty() ? flags.masks_patterns
                               : scenario.training.attention_mask
                                   ? std::string(kMaskPatternNames.name(*scenario.training.attention_mask))
                                   : "ep,ee,mp";
  std::vector<BalanceCase> cases;
  for (const std::int64_t tokens : lengths) {
    for (const MaskPattern pattern : parse_list_flag("--mask", patterns, kMaskPatternNames)) {
      cases.push_back({pattern, tokens});
    }
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
      ->check(CLI::Range(1, kMaxMasks))
      ->capture_default_str();
  command->add_option("--seed", flags->seed, "Seed of the masks and of the random distribution")->capture_default_str();
  command->add_option("--tile", flags->tile, "Tokens per side of the attention kernel's tile (FlexAttention: 128)")
      ->check(CLI::Range(16, 4096))
      ->capture_default_str();
  add_calibration_flag(*command, flags->calibration);
  command->add_option("--json", flags->json_file, "Write the rows as JSON to this file");
  command->callback([flags] { run_attention(*flags); });
}

}  // namespace weft::cli
