#include "simulator/planner/dflop/dflop_planner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>
#include <utility>

#include "simulator/core/checked_math.hpp"
#include "simulator/core/input_error.hpp"
#include "simulator/planner/dflop/dflop_timeline.hpp"
#include "simulator/planner/encoder_llm_scenario.hpp"
#include "simulator/workload/data/data_spec.hpp"

namespace weft::dflop {
namespace {

// Every sample of every iteration is drawn, weighed and timed.
constexpr std::int64_t kMaxSamples = std::int64_t{1} << 20;
// The profiler's grid ends here: larger microbatches take the last point's rates.
constexpr std::int64_t kMaxProfiledImages = std::int64_t{1} << 14;
constexpr std::int64_t kMaxProfiledTokens = std::int64_t{1} << 22;

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

double batch_flops(const SampleFlops& flops, std::span<const SampleShape> samples) {
  double total = 0.0;
  for (const SampleShape& sample : samples)
    total += flops.encoder(sample.images) + flops.llm_linear(sample.seq_len) + flops.llm_attention(sample.seq_len);
  return total;
}

// The scenario's own layout as a DFLOP plan: its TP and DP for both components (the encoder
// component's own under parallel.modules), its pipeline stages split between them (modality_stages, or the stages of
// its layer split that hold only encoder layers), its microbatch count. None when it does not split that way (virtual
// stages, context parallelism, a stage of both components).
std::optional<DflopPlan> scenario_plan(const ModelCosts& costs, const DflopReport& report, const SearchSpace& space) {
  const TrainingScenario& s = costs.scenario();
  const ParallelPlan& p = s.parallel;
  if (p.vpp != 1 || p.cp != 1 || p.world_size() != report.gpus) return std::nullopt;
  int encoder_stages = 0;
  if (!p.modality_stages.empty()) {
    for (std::size_t m = 0; m + 1 < p.modality_stages.size(); ++m) encoder_stages += p.modality_stages[m];
  } else {
    int layers = 0;
    for (const int stage : s.layers_per_virtual_stage()) {
      if (layers + stage > costs.encoder_layers()) break;
      layers += stage;
      ++encoder_stages;
    }
    if (layers != costs.encoder_layers()) return std::nullopt;
  }
  if (encoder_stages < 1 || encoder_stages >= p.pp) return std::nullopt;
  // Modules on meshes of their own (parallel.modules): the encoder component's, one for all its stages.
  const PositionMesh encoder = p.mesh_at(0);
  for (int position = 1; position < encoder_stages; ++position) {
    if (p.mesh_at(position) != encoder) return std::nullopt;
  }
  return evaluate_plan(report.profile, report.data, space, {encoder.tp, encoder_stages, encoder.dp},
                       {p.tp, p.pp - encoder_stages, p.dp}, checked_int(s.microbatches(), "microbatches"));
}

// The scheduler balances buckets; it does not order them. They go to slots in a seeded random
// order, as the random split's do, so that only the balance differs.
std::vector<std::vector<std::size_t>> in_slot_order(std::vector<std::vector<std::size_t>> buckets, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::shuffle(buckets.begin(), buckets.end(), random);
  return buckets;
}

}  // namespace

DflopReport plan_dflop(const TrainingScenario& scenario, const DflopOptions& options) {
  check_encoder_llm_scenario(scenario, "DFLOP");
  const DataSpec& data = *scenario.data;
  DflopReport report;
  report.gpus = scenario.cluster.gpus;
  report.gpus_per_node = scenario.cluster.gpus_per_node;
  report.memory_capacity = scenario.cluster.gpu.memory_capacity;
  report.pad_to = data.pad_to;
  report.anomalies = options.anomalies;
  report.correction_options = options.correction;
  report.ilp_limits = options.ilp;
  report.global_batch =
      data.pack ? saturating_mul(scenario.training.global_batch, data.max_samples) : scenario.training.global_batch;
  if (saturating_mul(report.global_batch, options.iterations) > kMaxSamples)
    throw InputError("training.global_batch: " + std::to_string(report.global_batch) + " samples an iteration over " +
                     std::to_string(options.iterations) + " iterations is more than the " +
                     std::to_string(kMaxSamples) + " samples weft dflop runs");
  const SequenceTokens tokens = scenario.model.sequence_tokens();
  const std::int64_t context = scenario.training.seq_len;

  // Profiling engine: the dataset's shapes, then the model's tables over the sizes the search can ask for.
  auto started = std::chrono::steady_clock::now();
  report.data = profile_dataset(
      profiling_sample_shapes(data, 0, static_cast<std::uint64_t>(options.profile_samples), context, tokens));
  ModelCosts costs(scenario);
  const double most_images = report.data.mean_images * static_cast<double>(report.global_batch);
  const double most_tokens = report.data.mean_tokens * static_cast<double>(report.global_batch);
  ProfileGrid grid;
  grid.max_images = std::clamp<std::int64_t>(std::llround(std::ceil(most_images)), 1, kMaxProfiledImages);
  grid.min_tokens = data.pad_to;
  grid.max_tokens = std::clamp<std::int64_t>(
      std::llround(std::ceil(std::max(most_tokens, static_cast<double>(context)))), data.pad_to, kMaxProfiledTokens);
  report.profile = profile_model(costs, grid);
  report.profile_ms = elapsed_ms(started);

  // Data-aware 3D parallelism optimizer, and the same search over the baselines' uniform layouts.
  SearchSpace space{report.gpus, report.global_batch, report.memory_capacity, false};
  started = std::chrono::steady_clock::now();
  report.dflop = find_parallelism(report.profile, report.data, space);
  report.dflop_search_ms = elapsed_ms(started);
  space.uniform = true;
  started = std::chrono::steady_clock::now();
  report.uniform = find_parallelism(report.profile, report.data, space);
  report.uniform_search_ms = elapsed_ms(started);
  if (!report.dflop.best)
    throw InputError("cluster: no layout of the encoder and the LLM over " + std::to_string(report.gpus) +
                     " GPUs fits in each GPU's memory at any number of microbatches");

  const DflopPlan& best = *report.dflop.best;
  struct Setup {
    DflopRun run;
    StageLayers stages;
    std::string layout;  // whose layout it runs
  };
  std::vector<Setup> setups;
  auto add = [&](std::string name, std::string layout, const DflopPlan& plan, BucketMethod split) {
    Setup setup;
    setup.layout = std::move(layout);
    setup.run.name = std::move(name);
    setup.run.plan = plan;
    setup.run.split = split;
    setup.stages = plan_stage_layers(costs, plan, data.pad_to);
    setups.push_back(std::move(setup));
  };
  if (const std::optional<DflopPlan> given = scenario_plan(costs, report, space)) {
    const bool fits = given->encoder_memory <= report.memory_capacity && given->llm_memory <= report.memory_capacity;
    add(fits ? "the scenario's layout, random split" : "the scenario's layout, random split (over memory by Eqs. 4-5)",
        "the scenario's layout", *given, BucketMethod::random);
  }
  if (report.uniform.best)
    add("best uniform layout, random split (Megatron-LM, PyTorch)", "best uniform layout", *report.uniform.best,
        BucketMethod::random);
  add("DFLOP's layout, random split (its optimizer alone)", "DFLOP's layout", best, BucketMethod::random);
  add("DFLOP's layout and online scheduler (DFLOP)", "DFLOP's layout", best, BucketMethod::ilp);
  add("DFLOP with adaptive correction", "DFLOP's layout", best, BucketMethod::ilp);
  Setup& scheduled = setups[setups.size() - 2];
  Setup& corrected = setups.back();
  AdaptiveCorrection correction(options.correction);
  const int buckets = checked_int(std::int64_t{best.microbatches} * best.llm.dp, "buckets");
  double flops = 0.0;
  for (int it = 0; it < options.iterations; ++it) {
    const std::vector<SampleShape> batch =
        draw_sample_shapes(data, static_cast<std::uint64_t>(it) * static_cast<std::uint64_t>(report.global_batch),
                           static_cast<std::uint64_t>(report.global_batch), context, tokens);
    flops += batch_flops(report.profile.flops, batch);
    const std::uint64_t seed = options.seed + static_cast<std::uint64_t>(it);
    auto run_batch = [&](Setup& setup, const std::vector<std::vector<std::size_t>>& split) {
      const std::vector<double> delays = options.anomalies.delays(batch, setup.run.plan, data.pad_to);
      setup.run.iteration_s.push_back(
          static_cast<double>(time_iteration(costs, setup.run.plan, setup.stages, batch, split, data.pad_to, delays)) /
          kNsPerSecond);
    };
    for (Setup& setup : setups) {
      if (setup.run.split == BucketMethod::random) {
        const DflopPlan& plan = setup.run.plan;
        const int count = checked_int(std::int64_t{plan.microbatches} * plan.llm.dp, "buckets");
        run_batch(setup, random_buckets(batch.size(), count, seed));
      }
    }
    // DFLOP's scheduler on the profile's estimates.
    const ItemDurations estimate = item_durations(report.profile, best, batch);
    SchedulerStep step;
    step.random_c_max = bucket_c_max(estimate.encoder, estimate.llm, random_buckets(batch.size(), buckets, seed));
    started = std::chrono::steady_clock::now();
    step.schedule = schedule_buckets(estimate.encoder, estimate.llm, buckets, options.ilp);
    step.solve_ms = elapsed_ms(started);
    run_batch(scheduled, in_slot_order(step.schedule.buckets, seed));
    // The same with the penalties adaptive correction has learned; tracking costs its share of the
    // batches it runs in.
    CorrectionStep tracked;
    tracked.tracking = correction.tracking();
    tracked.penalties = correction.penalties();
    tracked.corrected = correction.penalised(batch, data.pad_to);
    const ItemDurations adjusted = correction.corrected(batch, estimate, data.pad_to);
    const BucketAssignment split =
        tracked.corrected == 0 ? step.schedule : schedule_buckets(adjusted.encoder, adjusted.llm, buckets, options.ilp);
    run_batch(corrected, in_slot_order(split.buckets, seed));
    if (tracked.tracking) {
      corrected.run.iteration_s.back() *= 1.0 + options.correction.cost;
      const ItemDurations observed = observed_durations(costs, best, corrected.stages, batch, data.pad_to,
                                                        options.anomalies.delays(batch, best, data.pad_to));
      if (tracked.corrected > 0) {
        const double before = bucket_c_max(observed.encoder, observed.llm, step.schedule.buckets);
        tracked.benefit = (before - bucket_c_max(observed.encoder, observed.llm, split.buckets)) / before;
      }
      correction.observe(batch, estimate, observed, data.pad_to, tracked.benefit);
    }
    report.scheduler.push_back(std::move(step));
    report.correction.push_back(tracked);
  }
  // Each layout once more, op by op on uniform samples (full_simulation.hpp).
  for (const Setup& setup : setups) {
    const DflopPlan& plan = setup.run.plan;
    const std::string& layout = setup.layout;
    const auto seen = std::find_if(report.full.begin(), report.full.end(), [&](const FullSimulation& done) {
      return done.plan.encoder == plan.encoder && done.plan.llm == plan.llm &&
             done.plan.microbatches == plan.microbatches;
    });
    if (seen == report.full.end()) {
      report.full.push_back(
          simulate_layout(scenario, costs, layout, plan, setup.stages, report.data, report.global_batch, data.pad_to));
    } else if (seen->layout.find(layout) == std::string::npos) {
      seen->layout += " = " + layout;  // another run's layout is the same
    }
  }
  for (Setup& setup : setups) {
    DflopRun& run = setup.run;
    run.mean_iteration_s = std::accumulate(run.iteration_s.begin(), run.iteration_s.end(), 0.0) /
                           static_cast<double>(run.iteration_s.size());
    run.samples_per_s = static_cast<double>(report.global_batch) / run.mean_iteration_s;
    run.tflops_per_gpu = flops / static_cast<double>(options.iterations) / run.mean_iteration_s / report.gpus / 1e12;
    report.runs.push_back(std::move(run));
  }
  return report;
}

}  // namespace weft::dflop
