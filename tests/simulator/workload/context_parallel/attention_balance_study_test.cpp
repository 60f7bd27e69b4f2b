#include "simulator/workload/context_parallel/attention_balance_study.hpp"

#include <catch2/catch.hpp>

#include "cost_models/cluster_cost_model.hpp"
#include "simulator/core/json_cursor.hpp"
#include "simulator/workload/training_scenario.hpp"
#include "tests/support/cli_expectations.hpp"

namespace weft {
namespace {

struct Setup {
  TrainingScenario scenario;
  ClusterCostModel cost;
  explicit Setup(TrainingScenario s) : scenario(std::move(s)), cost(scenario.cluster) {}
  BalanceLayer layer() const {
    return {.model = scenario.model.single(),
            .context = scenario.shard_context(),
            .cost = cost,
            .gpu = scenario.cluster.gpu};
  }
};

Setup cornstarch() {
  const JsonDocument document = JsonDocument::parse_file(test::experiment("cornstarch-llama3-70b-cp8-64xa40"));
  return Setup(load_training_scenario(document.root(), nullptr));
}

void no_progress(std::size_t, std::size_t) {}

const DistributionOutcome& outcome(const BalanceRow& row, TokenDistribution distribution) {
  for (const DistributionOutcome& o : row.outcomes) {
    if (o.distribution == distribution) return o;
  }
  FAIL("no outcome");
  return row.outcomes.front();
}

TEST_CASE("a causal mask over 8 ranks: ring's last rank holds 1.87 times the mean, zigzag none more",
          "[context_parallel]") {
  const Setup setup = cornstarch();
  const BalanceStudy study{.ranks = 8,
                           .tile = 128,
                           .masks = 1,
                           .seed = 1,
                           .distributions = {TokenDistribution::lpt, TokenDistribution::random, TokenDistribution::ring,
                                             TokenDistribution::zigzag}};
  const std::vector<BalanceRow> rows =
      run_balance_study(study, {{MaskPattern::causal, 16384}}, setup.layer(), no_progress);
  REQUIRE(rows.size() == 1);
  const BalanceRow& row = rows.front();
  // 128 row blocks, block b (from 1) touching b tiles: 8256 tiles of 128 x 128.
  CHECK(row.density == Approx(8256.0 / (128.0 * 128.0)));
  // Ring: the last rank's rows 113..128 hold 16 (113 + 128) / 2 = 1928 tiles, the mean 8256 / 8 = 1032.
  CHECK(outcome(row, TokenDistribution::ring).tile_imbalance == Approx(1928.0 / 1032.0));
  CHECK(outcome(row, TokenDistribution::zigzag).tile_imbalance == Approx(1.0));
  // Round robin over 128 blocks: rank r holds blocks r + 1, r + 9, ..., the last 8 + 120 + ... = 16 (8 + 128) / 2.
  CHECK(outcome(row, TokenDistribution::random).tile_imbalance <= Approx(1088.0 / 1032.0));
  // LPT: within the largest block's 128 tiles of the mean.
  CHECK(outcome(row, TokenDistribution::lpt).tile_imbalance <= Approx((1032.0 + 128.0) / 1032.0));
  CHECK(outcome(row, TokenDistribution::ring).forward_s > outcome(row, TokenDistribution::zigzag).forward_s);
  CHECK(outcome(row, TokenDistribution::zigzag).backward_s > outcome(row, TokenDistribution::zigzag).forward_s);
}

TEST_CASE("a case's row depends on the seed only, not on the other cases", "[context_parallel]") {
  const Setup setup = cornstarch();
  const BalanceStudy study{.ranks = 8,
                           .tile = 128,
                           .masks = 3,
                           .seed = 4,
                           .distributions = {TokenDistribution::lpt, TokenDistribution::random}};
  const BalanceCase ee{MaskPattern::encoder_embedded, 16384};
  const std::vector<BalanceRow> alone = run_balance_study(study, {ee}, setup.layer(), no_progress);
  const std::vector<BalanceRow> after =
      run_balance_study(study, {{MaskPattern::prefix_lm, 16384}, ee}, setup.layer(), no_progress);
  CHECK(alone[0].density == after[1].density);
  CHECK(alone[0].outcomes[0].forward_s == after[1].outcomes[0].forward_s);
  CHECK(alone[0].outcomes[1].tile_imbalance == after[1].outcomes[1].tile_imbalance);
  BalanceStudy other = study;
  other.seed = 5;
  CHECK(run_balance_study(other, {ee}, setup.layer(), no_progress)[0].density != alone[0].density);
}

}  // namespace
}  // namespace weft
