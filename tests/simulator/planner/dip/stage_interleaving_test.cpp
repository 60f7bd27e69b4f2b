// Dual-queue interleaving (papers/001 §6.2): a hand timeline, 1F1B's closed form, an exhaustive
// search over every order a rank may run its stages in, and the memory guard.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <random>

#include "simulator/core/input_error.hpp"
#include "simulator/planner/dip/stage_interleaving.hpp"

namespace weft::dip {
namespace {

using Catch::Matchers::Contains;

// A pipeline of `ranks` stages and `microbatches` microbatches: microbatch m's forward runs
// through ranks 0..P-1, its backward back from P-1 to 0; earlier microbatches have higher
// priority. Forward m on rank r is stage 2 (m P + r), its backward the next one.
struct Pipeline {
  int ranks = 0;
  int microbatches = 0;
  std::vector<PipelineStage> stages;

  Pipeline(int p, int m, const std::function<TimeNs(int rank, bool backward)>& duration, Bytes memory = 10)
      : ranks(p), microbatches(m) {
    for (int mb = 0; mb < m; ++mb) {
      for (int r = 0; r < p; ++r) {
        PipelineStage forward{r, false, duration(r, false), memory, PipelineStage::kNone, m - mb, {}};
        if (r > 0) forward.predecessors.push_back(forward_of(mb, r - 1));
        PipelineStage backward{r, true, duration(r, true), 0, forward_of(mb, r), m - mb, {}};
        backward.predecessors.push_back(r + 1 < p ? backward_of(mb, r + 1) : forward_of(mb, r));
        stages.push_back(forward);
        stages.push_back(backward);
      }
    }
  }
  std::size_t forward_of(int mb, int r) const { return 2 * static_cast<std::size_t>(mb * ranks + r); }
  std::size_t backward_of(int mb, int r) const { return forward_of(mb, r) + 1; }

  // Megatron's 1F1B: rank r runs P - r - 1 warm-up forwards, then one forward and one backward
  // until the forwards run out, then the remaining backwards.
  std::vector<std::vector<std::size_t>> one_f_one_b() const {
    std::vector<std::vector<std::size_t>> order(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) {
      const int warmup = std::min(ranks - r - 1, microbatches);
      int f = 0, b = 0;
      for (; f < warmup; ++f) order[r].push_back(forward_of(f, r));
      while (f < microbatches) {
        order[r].push_back(forward_of(f++, r));
        order[r].push_back(backward_of(b++, r));
      }
      while (b < microbatches) order[r].push_back(backward_of(b++, r));
    }
    return order;
  }
};

TEST_CASE("one rank alternates forward and backward stages once both could start", "[dip][interleaving]") {
  // F0 [0, 1]; then F1 and B0 could both start at 1: after a forward comes a backward, B0 [1, 3];
  // F1 [3, 4]; B1 [4, 6].
  const Pipeline pipeline(1, 2, [](int, bool backward) { return backward ? 2 : 1; });
  const StageSchedule schedule = interleave_stages(pipeline.stages, 1);
  CHECK(schedule.order[0] == std::vector<std::size_t>{pipeline.forward_of(0, 0), pipeline.backward_of(0, 0),
                                                      pipeline.forward_of(1, 0), pipeline.backward_of(1, 0)});
  CHECK(schedule.start == std::vector<TimeNs>{0, 1, 3, 4});
  CHECK(schedule.makespan == 6);
  CHECK(schedule.peak_memory == std::vector<Bytes>{10});
}

TEST_CASE("a rank busy past a backward's ready time runs that backward next", "[dip][interleaving]") {
  // Rank 0: F0 (1), F1 (5), F2 (1), then B0 once rank 1's F0' (1) and B0' (1) are done. Rank 0 is
  // busy with F1 until 6, and B0 is ready at 3: after a forward comes that backward, so rank 0
  // holds two forwards' activations at most, not three.
  std::vector<PipelineStage> stages = {
      {0, false, 1, 10, PipelineStage::kNone, 3, {}},   // 0: F0
      {0, false, 5, 10, PipelineStage::kNone, 2, {}},   // 1: F1
      {0, false, 1, 10, PipelineStage::kNone, 1, {}},   // 2: F2
      {1, false, 1, 10, PipelineStage::kNone, 3, {0}},  // 3: F0'
      {1, true, 1, 0, 3, 3, {3}},                       // 4: B0'
      {0, true, 2, 0, 0, 3, {4}},                       // 5: B0
  };
  const StageSchedule schedule = interleave_stages(stages, 2);
  CHECK(schedule.order[0] == std::vector<std::size_t>{0, 1, 5, 2});
  CHECK(schedule.start[5] == 6);
  CHECK(schedule.peak_memory[0] == 20);
}

TEST_CASE("a stage waits for its input to arrive from another rank", "[dip][interleaving]") {
  // F (rank 0, 3) feeds F' (rank 1, 4) over a transfer of 5: F' starts at 3 + 5 = 8, not at 3.
  // G (rank 1, 2, lower priority) waits behind it in the queue.
  std::vector<PipelineStage> stages = {
      {0, false, 3, 0, PipelineStage::kNone, 2, {}},
      {1, false, 4, 0, PipelineStage::kNone, 2, {0}, {5}},
      {1, false, 2, 0, PipelineStage::kNone, 1, {}},
  };
  const StageSchedule interleaved = interleave_stages(stages, 2);
  CHECK(interleaved.order[1] == std::vector<std::size_t>{1, 2});
  CHECK(interleaved.start[1] == 8);
  CHECK(interleaved.makespan == 14);
  // The same rule when the orders are given: G first, then F' at 8 all the same.
  const StageSchedule given = time_stage_orders(stages, {{0}, {2, 1}});
  CHECK(given.start[2] == 0);
  CHECK(given.start[1] == 8);
  CHECK(given.makespan == 12);
  stages[1].arrival = {5, 5};
  CHECK_THROWS_WITH(interleave_stages(stages, 2), Contains("stage 1: arrival times do not match the predecessors"));
}

TEST_CASE("on a uniform pipeline it is as fast as 1F1B, whose time is (M + P - 1)(f + b)", "[dip][interleaving]") {
  for (int p : {2, 3, 4}) {
    for (int m : {1, 3, 8}) {
      INFO("P " << p << ", M " << m);
      const Pipeline pipeline(p, m, [](int, bool backward) { return backward ? 20 : 10; });
      const StageSchedule one_f_one_b = time_stage_orders(pipeline.stages, pipeline.one_f_one_b());
      CHECK(one_f_one_b.makespan == (m + p - 1) * 30);
      // 1F1B keeps min(P - r, M) microbatches in flight on rank r.
      CHECK(one_f_one_b.peak_memory[0] == 10 * std::min(p, m));
      const StageSchedule interleaved = interleave_stages(pipeline.stages, p);
      CHECK(interleaved.makespan <= one_f_one_b.makespan);
    }
  }
}

// The shortest makespan over every order each rank may run its stages in, keeping each kind's
// priority order (the space interleaving picks from): all interleavings of a rank's forward and
// backward sequences, on every rank.
TimeNs exhaustive_best(const Pipeline& pipeline) {
  const auto ranks = static_cast<std::size_t>(pipeline.ranks);
  std::vector<std::vector<std::vector<std::size_t>>> choices(ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    std::vector<bool> kinds(static_cast<std::size_t>(2 * pipeline.microbatches), false);
    std::fill(kinds.begin() + pipeline.microbatches, kinds.end(), true);  // sorted: forwards first
    do {
      std::vector<std::size_t> order;
      int f = 0, b = 0;
      for (bool backward : kinds) {
        order.push_back(backward ? pipeline.backward_of(b++, static_cast<int>(r))
                                 : pipeline.forward_of(f++, static_cast<int>(r)));
      }
      choices[r].push_back(order);
    } while (std::next_permutation(kinds.begin(), kinds.end()));
  }
  TimeNs best = std::numeric_limits<TimeNs>::max();
  std::vector<std::size_t> pick(ranks, 0);
  while (true) {
    std::vector<std::vector<std::size_t>> order;
    for (std::size_t r = 0; r < ranks; ++r) order.push_back(choices[r][pick[r]]);
    try {
      best = std::min(best, time_stage_orders(pipeline.stages, order).makespan);
    } catch (const InputError&) {  // a backward before its own forward on this rank: not valid
    }
    std::size_t r = 0;
    while (r < ranks && ++pick[r] == choices[r].size()) pick[r++] = 0;
    if (r == ranks) break;
  }
  return best;
}

TEST_CASE("interleaving against the exhaustive search of every valid order", "[dip][interleaving]") {
  SECTION("a vision rank faster than the language rank behind it") {
    // Rank 0 (encoder): forward 3, backward 4; rank 1 (backbone): forward 5, backward 9.
    const Pipeline pipeline(
        2, 4, [](int rank, bool backward) { return rank == 0 ? (backward ? 4 : 3) : (backward ? 9 : 5); });
    const TimeNs best = exhaustive_best(pipeline);
    const StageSchedule interleaved = interleave_stages(pipeline.stages, 2);
    const StageSchedule one_f_one_b = time_stage_orders(pipeline.stages, pipeline.one_f_one_b());
    CHECK(best <= interleaved.makespan);
    CHECK(interleaved.makespan <= one_f_one_b.makespan);
    WARN("2 ranks x 4 microbatches: exhaustive best " << best << ", interleaved " << interleaved.makespan << ", 1F1B "
                                                      << one_f_one_b.makespan);
  }
  SECTION("random stage times on 2 and 3 ranks") {
    std::mt19937_64 rng(7);
    int optimal = 0, cases = 0, beats_one_f_one_b = 0, behind_one_f_one_b = 0;
    double worst_gap = 0.0;
    for (int p : {2, 3}) {
      for (int m : {2, 3}) {
        for (int trial = 0; trial < 20; ++trial) {
          std::vector<TimeNs> times(static_cast<std::size_t>(2 * p));
          for (TimeNs& t : times) t = std::uniform_int_distribution<TimeNs>(1, 20)(rng);
          const Pipeline pipeline(p, m, [&](int rank, bool backward) { return times[2 * rank + (backward ? 1 : 0)]; });
          const TimeNs best = exhaustive_best(pipeline);
          const TimeNs interleaved = interleave_stages(pipeline.stages, p).makespan;
          const TimeNs one_f_one_b = time_stage_orders(pipeline.stages, pipeline.one_f_one_b()).makespan;
          REQUIRE(best <= interleaved);
          beats_one_f_one_b += interleaved < one_f_one_b ? 1 : 0;
          behind_one_f_one_b += interleaved > one_f_one_b ? 1 : 0;
          ++cases;
          optimal += interleaved == best ? 1 : 0;
          worst_gap = std::max(worst_gap, static_cast<double>(interleaved - best) / static_cast<double>(best));
        }
      }
    }
    WARN("interleaving optimal in " << optimal << " of " << cases << " random pipelines; worst gap "
                                    << 100.0 * worst_gap << "%; faster than 1F1B in " << beats_one_f_one_b
                                    << ", slower in " << behind_one_f_one_b);
    CHECK(optimal * 2 > cases);
    CHECK(beats_one_f_one_b > behind_one_f_one_b);
  }
}

TEST_CASE("the memory guard holds forwards back until a backward frees their room", "[dip][interleaving]") {
  const Pipeline pipeline(3, 6, [](int, bool backward) { return backward ? 2 : 1; });
  const StageSchedule free = interleave_stages(pipeline.stages, 3);
  for (Bytes limit : {30, 20, 10}) {
    INFO("limit " << limit);
    const StageSchedule guarded = interleave_stages(pipeline.stages, 3, limit);
    for (Bytes peak : guarded.peak_memory) CHECK(peak <= limit);
    CHECK(guarded.makespan >= free.makespan);
  }
  // With room for one microbatch, each rank strictly alternates.
  const StageSchedule tight = interleave_stages(pipeline.stages, 3, 10);
  for (std::size_t k = 0; k < tight.order[0].size(); ++k)
    CHECK(pipeline.stages[tight.order[0][k]].backward == (k % 2 == 1));
  CHECK_THROWS_WITH(interleave_stages(pipeline.stages, 3, 9), Contains("memory limit 9 bytes is too small"));
}

TEST_CASE("stages that cannot be a pipeline are refused", "[dip][interleaving]") {
  std::vector<PipelineStage> stages(2);
  stages[0].predecessors = {1};
  stages[1].predecessors = {0};
  CHECK_THROWS_WITH(interleave_stages(stages, 1), Contains("cycle"));
  stages[1].predecessors = {5};
  CHECK_THROWS_WITH(interleave_stages(stages, 1), Contains("stage 1: unknown predecessor"));
  stages[1].predecessors.clear();
  stages[1].rank = 2;
  CHECK_THROWS_WITH(interleave_stages(stages, 1), Contains("stage 1: rank out of range"));
  stages[1].rank = 0;
  stages[1].backward = true;
  stages[1].frees = 1;
  CHECK_THROWS_WITH(interleave_stages(stages, 1), Contains("frees what is not a forward stage"));
  stages[1].backward = false;
  stages[1].frees = PipelineStage::kNone;
  CHECK_THROWS_WITH(time_stage_orders(stages, {{0, 0}}), Contains("stage 0 is listed twice"));
  CHECK_THROWS_WITH(time_stage_orders(stages, {{1}}), Contains("every stage must be listed once"));
}

}  // namespace
}  // namespace weft::dip
