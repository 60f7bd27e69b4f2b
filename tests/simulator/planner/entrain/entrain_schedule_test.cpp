// Entrain's pipeline on the stage model, checked against schedules worked out by hand.
#include "simulator/planner/entrain/entrain_schedule.hpp"

#include <algorithm>

#include <catch2/catch.hpp>

#include "tests/simulator/planner/dip/dip_test_support.hpp"

namespace weft::entrain {
namespace {

struct Fixture {
  TrainingScenario scenario = test::load_scenario_text(test::small_vlm_scenario(""));
  MultimodalModel model{scenario.model};
  dip::LayerCosts costs{model, scenario.shard_context(), scenario.cluster, false};
  // Sample s: s + 1 images and 1024 + 512 s tokens.
  std::vector<SampleShape> samples = {{1024, 1, 0, 0}, {1536, 2, 0, 0}, {2048, 3, 0, 0}, {2560, 4, 0, 0}};

  // Forward and backward time of layers [first, end) for a packed sequence of `set`.
  std::pair<TimeNs, TimeNs> time_of(int first, int end, const SampleSet& set) {
    const SampleShape shape = packed_shape(samples, set, 128);
    TimeNs forward = 0;
    TimeNs backward = 0;
    for (int layer = first; layer < end; ++layer) {
      const dip::LayerCost& cost = costs.in_stage(layer, shape);
      forward += cost.forward;
      backward += cost.backward;
    }
    return {forward, backward};
  }
  TimeNs transfer(int from, int to, int layer, const SampleSet& set) {
    return costs.transfer_time(from, to, costs.in_stage(layer, packed_shape(samples, set, 128)).input);
  }
};

const dip::PipelineStage& find(const ReplicaTimeline& timeline, int rank, bool backward, TimeNs duration) {
  for (const dip::PipelineStage& stage : timeline.stages) {
    if (stage.rank == rank && stage.backward == backward && stage.duration == duration) return stage;
  }
  FAIL("no such stage");
  return timeline.stages.front();
}

TEST_CASE("a packed microbatch sums its samples' tokens (padded) and images", "[entrain][schedule]") {
  Fixture f;
  CHECK(packed_shape(f.samples, {0, 3}, 128) == SampleShape{3584, 5, 0, 0});
  CHECK(packed_shape(f.samples, {1}, 1000) == SampleShape{2000, 2, 0, 0});
}

TEST_CASE("two ranks, two microbatches in order: 1F1B as worked out by hand", "[entrain][schedule]") {
  Fixture f;
  // The encoder (4 vision layers, the projector anchored to the last) on rank 0, the LLM on rank 1.
  const ComponentPipeline pipeline{{4}, {4}};
  const std::vector<SampleSet> batches{{0, 1}, {2, 3}};
  const ReplicaTimeline timeline =
      time_replica(f.costs, dip::LayerPolicy::keep, f.samples, pipeline, batches, batches, 128, PipelineRun{});
  const auto [ef0, eb0] = f.time_of(0, 4, batches[0]);
  const auto [ef1, eb1] = f.time_of(0, 4, batches[1]);
  const auto [lf0, lb0] = f.time_of(4, 8, batches[0]);
  const auto [lf1, lb1] = f.time_of(4, 8, batches[1]);
  const TimeNs up0 = f.transfer(0, 1, 4, batches[0]);
  const TimeNs up1 = f.transfer(0, 1, 4, batches[1]);
  const TimeNs down0 = f.transfer(1, 0, 4, batches[0]);
  const TimeNs down1 = f.transfer(1, 0, 4, batches[1]);
  // Rank 0 warms up with both forwards (2 stages - position 0), then both backwards; rank 1 runs
  // F0 B0 F1 B1.
  const TimeNs rank0_f1_end = ef0 + ef1;
  const TimeNs rank1_f0_end = ef0 + up0 + lf0;
  const TimeNs rank1_b0_end = rank1_f0_end + lb0;
  const TimeNs rank1_f1_end = std::max(rank1_b0_end, rank0_f1_end + up1) + lf1;
  const TimeNs rank1_b1_end = rank1_f1_end + lb1;
  const TimeNs rank0_b0_end = std::max(rank0_f1_end, rank1_b0_end + down0) + eb0;
  const TimeNs rank0_b1_end = std::max(rank0_b0_end, rank1_b1_end + down1) + eb1;
  CHECK(timeline.schedule.makespan == std::max(rank0_b1_end, rank1_b1_end));
  CHECK(timeline.schedule.order[0].size() == 4);
  auto seconds = [](TimeNs ns) { return static_cast<double>(ns) / kNsPerSecond; };
  CHECK(timeline.encoder_forward == std::vector<double>{seconds(ef0), seconds(ef1)});
  CHECK(timeline.llm_forward == std::vector<double>{seconds(lf0), seconds(lf1)});
}

TEST_CASE("a deferred sample's LLM work runs with the next microbatch, and split backward frees the rest at once",
          "[entrain][schedule]") {
  Fixture f;
  const ComponentPipeline pipeline{{2, 2}, {2, 2}};
  // Microbatch 0's encoder work is samples 0 and 3; sample 3's LLM work is deferred to microbatch 1.
  const std::vector<SampleSet> encoder{{0, 3}, {1, 2}};
  const std::vector<SampleSet> llm{{0}, {1, 2, 3}};
  for (const bool split : {false, true}) {
    PipelineRun run;
    run.split_backward = split;
    const ReplicaTimeline timeline =
        time_replica(f.costs, dip::LayerPolicy::keep, f.samples, pipeline, encoder, llm, 128, run);
    // The LLM's first stage of microbatch 1 reads sample 3 from the encoder's microbatch 0 as well as
    // its own microbatch's samples: two encoder stages (parts) it waits for, split or not.
    const dip::PipelineStage& llm_first = find(timeline, 2, false, f.time_of(4, 6, llm[1]).first);
    CHECK(llm_first.predecessors.size() == 2u);
    // The encoder's last stage runs backward parts: with split, sample 0's after the LLM's microbatch 0
    // and sample 3's after its microbatch 1; without, the whole microbatch after the LLM's microbatch 1.
    std::vector<TimeNs> backward_durations;
    for (const dip::PipelineStage& stage : timeline.stages) {
      if (stage.rank == 1 && stage.backward) backward_durations.push_back(stage.duration);
    }
    if (split) {
      CHECK(backward_durations.size() == 3);  // {0}, {3}, {1, 2}
      const dip::PipelineStage& part0 = find(timeline, 1, true, f.time_of(2, 4, {0}).second);
      const dip::PipelineStage& llm_back0 = find(timeline, 2, true, f.time_of(4, 6, llm[0]).second);
      CHECK(part0.predecessors.size() == 1);
      CHECK(&timeline.stages[part0.predecessors[0]] == &llm_back0);
    } else {
      CHECK(backward_durations.size() == 2);
      const dip::PipelineStage& whole = find(timeline, 1, true, f.time_of(2, 4, encoder[0]).second);
      CHECK(whole.predecessors.size() == 2);  // the LLM's backward of microbatches 0 and 1
    }
    CHECK(timeline.llm_forward[0] == static_cast<double>(f.time_of(4, 8, llm[0]).first) / kNsPerSecond);
  }
}

TEST_CASE("eager forward warms each rank up as its memory allows, never more than the rank before it",
          "[entrain][schedule]") {
  Fixture f;
  const ComponentPipeline pipeline{{2, 2}, {2, 2}};
  // Four microbatches of one sample; the second LLM one is empty (its sample deferred to the third).
  const std::vector<SampleSet> encoder{{0}, {1}, {2}, {3}};
  const std::vector<SampleSet> llm{{0}, {}, {1, 2}, {3}};
  PipelineRun run;
  run.split_backward = true;
  run.eager_forward = true;
  // Ranks 0, 1 and 3 hold any number of microbatches, rank 2 none beyond 1F1B's warm-up (2).
  constexpr Bytes kPlenty = Bytes{1} << 50;
  run.activation_limit = {kPlenty, kPlenty, 1, kPlenty};
  const ReplicaTimeline timeline =
      time_replica(f.costs, dip::LayerPolicy::keep, f.samples, pipeline, encoder, llm, 128, run);
  // How many forward stages each rank runs before its first backward one.
  auto warmup = [&](int rank) {
    int forwards = 0;
    for (const std::size_t stage : timeline.schedule.order[static_cast<std::size_t>(rank)]) {
      if (timeline.stages[stage].backward) break;
      ++forwards;
    }
    return forwards;
  };
  // Ranks 0 and 1 run all four microbatches first (rank 0's encoder parts: one per LLM microbatch
  // its samples go to, so 4 forward stages); rank 2 keeps 1F1B's 2; rank 3 could hold all four but
  // runs fewer than rank 2 (else its first backward would wait for a forward that waits for it): 1.
  CHECK(warmup(0) == 4);
  CHECK(warmup(1) == 4);
  CHECK(warmup(2) == 2);
  CHECK(warmup(3) == 1);
  // The empty LLM microbatch costs nothing; every stage ran.
  CHECK(timeline.llm_forward[1] == 0.0);
  for (std::size_t i = 0; i < timeline.stages.size(); ++i)
    CHECK(timeline.schedule.end[i] >= timeline.schedule.start[i]);
  // Without eager forward every rank keeps 1F1B's warm-up: 4, 3, 2, 1 stages.
  run.eager_forward = false;
  const ReplicaTimeline plain =
      time_replica(f.costs, dip::LayerPolicy::keep, f.samples, pipeline, encoder, llm, 128, run);
  int forwards = 0;
  for (const std::size_t stage : plain.schedule.order[1]) {
    if (plain.stages[stage].backward) break;
    ++forwards;
  }
  CHECK(forwards == 3);
}

}  // namespace
}  // namespace weft::entrain
