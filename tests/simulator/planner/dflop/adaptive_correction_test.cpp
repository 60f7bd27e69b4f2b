#include "simulator/planner/dflop/adaptive_correction.hpp"

#include <catch2/catch.hpp>

namespace weft::dflop {
namespace {

TEST_CASE("anomalies pick shapes by hash and delay them by a share of the largest stage", "[dflop]") {
  DflopPlan plan;
  plan.encoder_stage_s = 0.2;
  plan.llm_stage_s = 0.5;
  const std::vector<SampleShape> samples{{1000, 2, 0.0, 0.0}, {1024, 2, 0.0, 0.0}, {3000, 5, 0.0, 0.0}};
  CHECK(Anomalies{0.0, 1.0, 1}.delays(samples, plan, 128) == std::vector<double>{0.0, 0.0, 0.0});
  // Every shape: 1,000 and 1,024 tokens pad to the same 1,024, one shape.
  CHECK(Anomalies{1.0, 0.5, 1}.delays(samples, plan, 128) == std::vector<double>{0.25, 0.25, 0.25});
  const Anomalies some{0.5, 1.0, 7};
  CHECK(some.affects(samples[0], 128) == some.affects(samples[1], 128));
  // Over many shapes, about the share asked for.
  int hit = 0;
  for (std::int64_t images = 0; images < 100; ++images) hit += some.affects({1024, images, 0.0, 0.0}, 128) ? 1 : 0;
  CHECK(hit > 30);
  CHECK(hit < 70);
}

TEST_CASE("adaptive correction penalises the shapes that run off their estimates", "[dflop]") {
  AdaptiveCorrection correction({0.04, 2, 0.05});
  const std::vector<SampleShape> samples{{1024, 1, 0.0, 0.0}, {2048, 2, 0.0, 0.0}};
  const ItemDurations estimate{{1.0, 1.0}, {1.0, 1.0}};
  // The second shape's LLM work takes twice its estimate; the first is 3% off (within 5%).
  const ItemDurations observed{{1.03, 1.0}, {1.0, 2.0}};
  CHECK(correction.observe(samples, estimate, observed, 128, std::nullopt));
  CHECK(correction.penalties() == 1);
  const std::vector<SampleShape> next{{2000, 2, 0.0, 0.0}, {1024, 1, 0.0, 0.0}, {512, 2, 0.0, 0.0}};
  const ItemDurations later{{1.0, 1.0, 1.0}, {3.0, 3.0, 3.0}};
  const ItemDurations corrected = correction.corrected(next, later, 128);
  CHECK(corrected.encoder == std::vector<double>{1.0, 1.0, 1.0});
  CHECK(corrected.llm == std::vector<double>{4.0, 3.0, 3.0});  // 2,000 tokens pad to 2,048: the penalised shape
  CHECK(correction.penalised(next, 128) == 1);
}

TEST_CASE("adaptive correction stops tracking when its benefit over the window is below its cost", "[dflop]") {
  AdaptiveCorrection correction({0.04, 2, 0.05});
  const std::vector<SampleShape> samples{{1024, 1, 0.0, 0.0}};
  const ItemDurations same{{1.0}, {1.0}};
  CHECK(correction.observe(samples, same, same, 128, 0.10));        // one benefit: too early to judge
  CHECK(correction.observe(samples, same, same, 128, 0.0));         // mean 5% > 4%: go on
  CHECK_FALSE(correction.observe(samples, same, same, 128, 0.02));  // mean 1%: stop
  CHECK_FALSE(correction.tracking());
  // Stopped, it learns nothing more.
  const ItemDurations slow{{1.0}, {5.0}};
  CHECK_FALSE(correction.observe(samples, same, slow, 128, 0.5));
  CHECK(correction.penalties() == 0);
  CHECK(correction.benefits() == std::vector<double>{0.10, 0.0, 0.02});
}

}  // namespace
}  // namespace weft::dflop
