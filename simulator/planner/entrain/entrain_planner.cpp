#include "simulator/planner/entrain/entrain_planner.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>

#include "simulator/core/checked_math.hpp"
#include "simulator/core/format_units.hpp"
#include "simulator/core/input_error.hpp"
#include "simulator/planner/dip/dip_planner.hpp"
#include "simulator/planner/encoder_llm_scenario.hpp"
#include "simulator/planner/entrain/entrain_schedule.hpp"
#include "simulator/planner/entrain/sample_cost_model.hpp"
#include "simulator/workload/training_workload.hpp"

namespace weft::entrain {
namespace {

// Every sample of an iteration is drawn, weighed and assigned: about a second per 100,000 on this
// project's 2-core machine, and 4 GiB of shapes at the limit.
constexpr std::int64_t kMaxEntrainSamples = std::int64_t{1} << 24;

void check_scenario(const TrainingScenario& scenario) {
  check_encoder_llm_scenario(scenario, "Entrain");
  if (scenario.parallel.per_module_meshes()) throw InputError(std::string(dip::kOneMesh));
  if (!scenario.data->pack || scenario.data->max_samples < 1)
    throw InputError(
        "data.pack: an Entrain microbatch is several samples packed into one sequence: set \"pack\": "
        "true and \"max_samples\" to the samples of a microbatch");
}

// What the planner needs of a scenario, priced once.
struct Context {
  const TrainingScenario& scenario;
  const MultimodalModel model;
  dip::LayerCosts costs;
  dip::LayerPolicy policy;
  int encoder_layers;
  SampleCostModel cost_model;
  SequenceTokens sequence_tokens;
  std::int64_t micro_batch;   // samples per microbatch: data.max_samples
  std::int64_t global_batch;  // samples per iteration: training.global_batch sequences of micro_batch

  explicit Context(const TrainingScenario& s)
      : scenario(s),
        model(s.model, s.parallel.cp_algorithm),
        // Pipeline ranks placed as Megatron and weft plan place them.
        costs(model, one_sample_context(s), s.cluster, s.options.ideal_network, s.parallel.dp),
        policy(dip::layer_policy(s)),
        encoder_layers(s.model.first_layer(s.model.modules.size() - 1)),
        cost_model(costs, policy, encoder_layers),
        sequence_tokens(s.model.sequence_tokens()),
        micro_batch(s.data->max_samples),
        global_batch(saturating_mul(s.training.global_batch, s.data->max_samples)) {
    if (global_batch > kMaxEntrainSamples)
      throw InputError("training.global_batch: " + std::to_string(s.training.global_batch) + " microbatches of " +
                       std::to_string(s.data->max_samples) + " samples is more than the " +
                       std::to_string(kMaxEntrainSamples) + " samples an iteration weft entrain plans");
  }

  static ShardContext one_sample_context(const TrainingScenario& s) {
    ShardContext context = s.shard_context();
    context.micro_batch = 1;  // a stage's samples run as one packed sequence
    return context;
  }

  std::vector<SampleShape> profiling_batch(std::uint64_t batch, std::int64_t n) const {
    return profiling_sample_shapes(*scenario.data, batch, static_cast<std::uint64_t>(n), scenario.training.seq_len,
                                   sequence_tokens);
  }

  // Each sample's work as the cost model estimates it against weft's per-layer costs of the sample
  // alone: the mean and largest relative error over `samples`, both components together.
  std::pair<double, double> estimate_error(std::span<const SampleShape> samples) {
    double sum = 0.0;
    double worst = 0.0;
    int counted = 0;
    for (const SampleShape& sample : samples) {
      const SampleWork estimate = cost_model.work(sample);
      double priced = 0.0;
      for (int layer = 0; layer < cost_model.layers(); ++layer) {
        if (cost_model.layer_time(layer, sample) > 0.0)
          priced += static_cast<double>(costs.in_stage(layer, sample).latency(policy)) / kNsPerSecond;
      }
      if (priced <= 0.0) continue;
      const double error = std::abs(estimate.encoder + estimate.llm - priced) / priced;
      sum += error;
      worst = std::max(worst, error);
      ++counted;
    }
    return {counted == 0 ? 0.0 : sum / static_cast<double>(counted), worst};
  }

  std::vector<double> proportions(std::span<const SampleShape> samples) const {
    std::vector<double> out(2, 0.0);
    for (const SampleShape& sample : samples) {
      const SampleWork work = cost_model.work(sample);
      out[0] += work.encoder;
      out[1] += work.llm;
    }
    return out;
  }
};

// Bytes a stage holds for the whole iteration (its layers' parameters) under `scenario`'s DP.
Bytes stage_static_memory(Context& context, const TrainingScenario& scenario, int first, int end) {
  std::int64_t parameters = 0;
  std::int64_t trained = 0;
  for (int layer = first; layer < end; ++layer) {
    parameters += context.costs.at(layer, kOneOfEach).parameters;
    trained += context.costs.at(layer, kOneOfEach).trained;
  }
  return rank_static_memory(scenario, parameters, trained, 0).total();  // one mesh: any position
}

// Per stage of `config`, its first layer (encoder stages, then the LLM's), ending with the layer count.
std::vector<int> stage_boundaries(const ComponentConfig& config) {
  std::vector<int> out{0};
  for (const auto* stages : {&config.encoder.layers, &config.llm.layers}) {
    for (const int layers : *stages) out.push_back(out.back() + layers);
  }
  return out;
}

// What Algorithm 3 reads of a profiling batch: each layer's cost and the components' work per
// microbatch of the batch's mean, and that mean microbatch's shape (for its activations).
struct ProfiledCosts {
  std::vector<double> layer_cost;
  std::vector<double> proportions;
  SampleShape mean_microbatch;
};

ProfiledCosts profile_costs(const Context& context, std::span<const SampleShape> profiled) {
  ProfiledCosts out;
  out.layer_cost.assign(static_cast<std::size_t>(context.cost_model.layers()), 0.0);
  SampleShape total;
  for (const SampleShape& sample : profiled) {
    for (int layer = 0; layer < context.cost_model.layers(); ++layer)
      out.layer_cost[static_cast<std::size_t>(layer)] += context.cost_model.layer_time(layer, sample);
    total.seq_len += sample.seq_len;
    total.images += sample.images;
  }
  const double per_microbatch = static_cast<double>(context.micro_batch) / static_cast<double>(profiled.size());
  for (double& cost : out.layer_cost) cost *= per_microbatch;
  const std::int64_t pad = context.scenario.data->pad_to;
  const std::int64_t tokens = std::llround(static_cast<double>(total.seq_len) * per_microbatch);
  out.mean_microbatch = {std::max<std::int64_t>(pad, (tokens + pad - 1) / pad * pad),
                         std::llround(static_cast<double>(total.images) * per_microbatch), 0.0, 0.0};
  out.proportions = context.proportions(profiled);
  return out;
}

// The layout of `allocation` (stage groups per component) at `dp`: Eq. 4.1 per component, Eq. 4.2,
// and the fullest GPU under 1F1B. Empty stages when a component gets more stages than layers.
ComponentConfig evaluate(Context& context, int dp, std::vector<int> allocation, const ProfiledCosts& profile) {
  const TrainingScenario& s = context.scenario;
  const int units = std::accumulate(allocation.begin(), allocation.end(), 0);
  ComponentConfig config;
  config.dp = dp;
  config.microbatches = checked_int(context.global_batch / (dp * context.micro_batch), "microbatches");
  config.allocation = std::move(allocation);
  const int layers = context.cost_model.layers();
  const int encoder_layers = context.encoder_layers;
  if (config.allocation[0] > encoder_layers || config.allocation[1] > layers - encoder_layers) return config;
  const std::span<const double> layer_cost = profile.layer_cost;
  config.encoder =
      min_max_partition(layer_cost.subspan(0, static_cast<std::size_t>(encoder_layers)), config.allocation[0]);
  config.llm = min_max_partition(layer_cost.subspan(static_cast<std::size_t>(encoder_layers)), config.allocation[1]);
  config.iteration_s =
      analytical_iteration(std::vector<LayerPartition>{config.encoder, config.llm}, config.microbatches);
  config.samples_per_s = static_cast<double>(context.global_batch) / config.iteration_s;
  TrainingScenario with_dp = s;
  with_dp.parallel.dp = dp;
  with_dp.parallel.pp = units;
  const std::vector<int> bounds = stage_boundaries(config);
  for (int k = 0; k < units; ++k) {
    Bytes activations = 0;
    for (int layer = bounds[static_cast<std::size_t>(k)]; layer < bounds[static_cast<std::size_t>(k) + 1]; ++layer)
      activations += context.costs.in_stage(layer, profile.mean_microbatch).memory(context.policy);
    config.stage_static_memory.push_back(stage_static_memory(context, with_dp, bounds[static_cast<std::size_t>(k)],
                                                             bounds[static_cast<std::size_t>(k) + 1]));
    const Bytes held = config.stage_static_memory.back() + std::min(config.microbatches, units - k) * activations;
    config.largest_memory = std::max(config.largest_memory, held);
  }
  config.fits = config.largest_memory <= s.cluster.gpu.memory_capacity;
  return config;
}

// A replica's stage groups of TP GPUs at `dp`.
int stage_groups(const TrainingScenario& s, int dp) {
  return checked_int(s.parallel.world_size() / (std::int64_t{dp} * s.parallel.tp), "stage groups");
}

// Algorithm 3 over every DP degree the batch and cluster allow, from a profiling batch.
std::vector<ComponentConfig> search(Context& context, const ProfiledCosts& profile) {
  const TrainingScenario& s = context.scenario;
  const std::int64_t groups = s.parallel.world_size() / s.parallel.tp;
  std::vector<ComponentConfig> out;
  for (int dp = 1; dp <= groups; ++dp) {
    if (groups % dp != 0 || groups / dp < 2 || context.global_batch % (std::int64_t{dp} * context.micro_batch) != 0)
      continue;
    ComponentConfig config =
        evaluate(context, dp, proportional_allocation(stage_groups(s, dp), profile.proportions), profile);
    if (!config.encoder.layers.empty()) out.push_back(std::move(config));
  }
  return out;
}

// Algorithm 3's choice at `dp`: its layout (proportional allocation gives one per DP degree).
ComponentConfig layout_at(const std::vector<ComponentConfig>& candidates, int dp, const std::string& profile) {
  for (const ComponentConfig& config : candidates) {
    if (config.dp == dp) return config;
  }
  throw InputError("parallel.dp: Algorithm 3 finds no layout of " + std::to_string(dp) + " replicas from " + profile +
                   " (a component would get more stages than layers, or the batch does not split)");
}

double standard_deviation(const std::vector<double>& values) {
  if (values.empty()) return 0.0;
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  double sum = 0.0;
  for (const double v : values) sum += (v - mean) * (v - mean);
  return std::sqrt(sum / static_cast<double>(values.size()));
}

// The microbatches of every replica.
struct ReplicaBatches {
  std::vector<std::vector<SampleSet>> encoder;
  std::vector<std::vector<SampleSet>> llm;
  std::size_t deferred = 0;
};

ReplicaBatches in_order(std::int64_t samples, int replicas, std::int64_t micro_batch) {
  ReplicaBatches out;
  const std::int64_t each = samples / replicas;
  for (int r = 0; r < replicas; ++r) {
    std::vector<SampleSet>& sets = out.encoder.emplace_back();
    for (std::int64_t first = r * each; first < (r + 1) * each; first += micro_batch) {
      SampleSet& set = sets.emplace_back();
      for (std::int64_t s = first; s < first + micro_batch; ++s) set.push_back(static_cast<std::size_t>(s));
    }
  }
  out.llm = out.encoder;
  return out;
}

ReplicaBatches hierarchical(std::span<const SampleWork> work, int replicas, int microbatches, bool defer) {
  ReplicaBatches out;
  for (const SampleSet& members : assign_to_replicas(work, replicas)) {
    DeferredMicrobatches assigned = hierarchical_assignment(work, members, microbatches, defer);
    out.deferred += assigned.deferred;
    out.encoder.push_back(std::move(assigned.encoder));
    out.llm.push_back(std::move(assigned.llm));
  }
  return out;
}

EntrainRun run_batches(Context& context, std::string name, std::span<const SampleShape> samples,
                       const ComponentConfig& config, const ReplicaBatches& batches, bool split, bool eager) {
  const TrainingScenario& s = context.scenario;
  ComponentPipeline pipeline{config.encoder.layers, config.llm.layers};
  PipelineRun run;
  run.split_backward = split;
  run.eager_forward = eager;
  // What each rank may hold of activations beside its static memory.
  for (const Bytes held : config.stage_static_memory)
    run.activation_limit.push_back(s.cluster.gpu.memory_capacity - held);
  EntrainRun out;
  out.name = std::move(name);
  out.deferred = batches.deferred;
  double encoder_std = 0.0;
  double llm_std = 0.0;
  for (std::size_t r = 0; r < batches.encoder.size(); ++r) {
    const ReplicaTimeline timeline = time_replica(context.costs, context.policy, samples, pipeline, batches.encoder[r],
                                                  batches.llm[r], s.data->pad_to, run);
    out.iteration = std::max(out.iteration, timeline.schedule.makespan);
    for (std::size_t k = 0; k < config.stage_static_memory.size(); ++k)
      out.largest_memory =
          std::max(out.largest_memory, config.stage_static_memory[k] + timeline.schedule.peak_memory[k]);
    out.peak_activations = std::max(out.peak_activations, *std::max_element(timeline.schedule.peak_memory.begin(),
                                                                            timeline.schedule.peak_memory.end()));
    out.microbatches = std::max(out.microbatches, static_cast<int>(batches.encoder[r].size()));
    encoder_std += standard_deviation(timeline.encoder_forward);
    llm_std += standard_deviation(timeline.llm_forward);
  }
  const auto replicas = static_cast<double>(batches.encoder.size());
  out.encoder_forward_std_s = encoder_std / replicas;
  out.llm_forward_std_s = llm_std / replicas;
  out.samples_per_s = static_cast<double>(samples.size()) / (static_cast<double>(out.iteration) / kNsPerSecond);
  out.fits = out.largest_memory <= s.cluster.gpu.memory_capacity;
  return out;
}

// weft plan on the same batch: the scenario's own schedule and DIP's, each replica planned on its
// own and the slowest reported, on the same stage model (no per-microbatch forward times: "n/a").
std::vector<EntrainRun> plan_dip_baseline(const TrainingScenario& scenario, std::int64_t global_batch,
                                          std::int64_t iterations) {
  if (scenario.microbatch_shapes()->samples != global_batch) {
    throw InputError("training.seq_len: " + std::to_string(scenario.training.seq_len) +
                     " tokens cannot pack data.max_samples samples into every microbatch, so weft plan's batch would "
                     "differ from Entrain's: give a longer context");
  }
  dip::DipOptions options;
  options.max_iterations = iterations;
  options.threads = 1;
  const dip::DipPlan plan = dip::plan_dip(scenario, options);
  auto run = [&](std::string name, TimeNs iteration, Bytes peak) {
    EntrainRun out;
    out.name = std::move(name);
    out.iteration = iteration;
    out.samples_per_s = static_cast<double>(global_batch) / (static_cast<double>(iteration) / kNsPerSecond);
    out.encoder_forward_std_s = out.llm_forward_std_s = -1.0;
    out.peak_activations = peak;
    out.largest_memory = plan.static_memory + peak;
    out.fits = out.largest_memory <= scenario.cluster.gpu.memory_capacity;
    out.microbatches = static_cast<int>(plan.shapes.size());
    return out;
  };
  TimeNs baseline = 0;
  for (const dip::ReplicaOutcome& replica : plan.replicas) baseline = std::max(baseline, replica.baseline);
  const std::string schedule(kPipelineScheduleNames.name(scenario.parallel.schedule));
  return {run(schedule + ", samples in order, the scenario's layout (weft plan's baseline)", baseline,
              plan.steps.front().peak_activations),
          run("DIP (weft plan, " + std::to_string(iterations) + " search expansions)", plan.schedule.makespan,
              plan.steps.back().peak_activations)};
}

}  // namespace

EntrainReport plan_entrain(const TrainingScenario& scenario, const EntrainOptions& options) {
  check_scenario(scenario);
  Context context(scenario);
  const ParallelPlan& p = scenario.parallel;
  EntrainReport report;
  report.gpus = checked_int(p.world_size(), "GPUs");
  report.tp = p.tp;
  report.dp = p.dp;
  report.global_batch = context.global_batch;
  report.micro_batch = context.micro_batch;
  report.fit_error = context.cost_model.worst_fit_error();
  const int units = stage_groups(scenario, p.dp);

  // Algorithm 2, and the trials of Table 4.2, each batch drawn afresh.
  std::uint64_t drawn = 0;
  auto proportions = [&](std::int64_t n) { return context.proportions(context.profiling_batch(drawn++, n)); };
  report.profiling = minimum_profiling_batch(proportions, units, options.alpha, options.p_error, options.n0,
                                             options.max_profiling_batch);
  for (const std::int64_t size : options.trial_sizes)
    report.trials.emplace_back(size, allocations_seen(proportions, units, size, report.profiling.trials));

  // Algorithm 3 from a b_min batch; the baselines' configuration from the iteration's first microbatch.
  const std::vector<SampleShape> profiled = context.profiling_batch(drawn++, report.profiling.batch);
  const ProfiledCosts profile = profile_costs(context, profiled);
  report.proportions = profile.proportions;
  std::tie(report.estimate_error, report.worst_estimate_error) = context.estimate_error(profiled);
  report.candidates = search(context, profile);
  for (const ComponentConfig& config : report.candidates) {
    if (config.fits && config.samples_per_s > report.best.samples_per_s) report.best = config;
  }
  report.below_b_min = context.global_batch < report.profiling.batch;
  report.entrain =
      layout_at(report.candidates, p.dp, "a profile of " + std::to_string(report.profiling.batch) + " samples");
  if (!report.entrain.fits)
    throw InputError("parallel.dp: Entrain's layout of " + std::to_string(p.dp) + " replicas needs " +
                     format_bytes(report.entrain.largest_memory) + " on its fullest GPU, more than the GPU holds");
  const std::vector<SampleShape> samples =
      draw_sample_shapes(*scenario.data, 0, static_cast<std::uint64_t>(context.global_batch), scenario.training.seq_len,
                         context.sequence_tokens);
  const std::span<const SampleShape> first_microbatch(samples.data(), static_cast<std::size_t>(context.micro_batch));
  report.one_microbatch =
      layout_at(search(context, profile_costs(context, first_microbatch)), p.dp, "one microbatch's profile");

  // The iteration's batch, run each way.
  std::vector<SampleWork> work;
  for (const SampleShape& sample : samples) work.push_back(context.cost_model.work(sample));
  const int k = report.entrain.microbatches;
  const ReplicaBatches ordered = in_order(context.global_batch, p.dp, context.micro_batch);
  // A layout that does not fit has no run: the baselines' profile can starve a component of GPUs.
  if (report.one_microbatch.fits) {
    report.runs.push_back(run_batches(context, "1F1B, samples in order, layout from one microbatch's profile", samples,
                                      report.one_microbatch, ordered, false, false));
  }
  // weft plan refusing the batch (its memory guard) leaves Entrain's runs standing.
  try {
    for (EntrainRun& run : plan_dip_baseline(scenario, context.global_batch, options.dip_iterations))
      report.runs.push_back(std::move(run));
  } catch (const InputError& error) {
    report.dip_refused = error.what();
  }
  report.runs.push_back(run_batches(context, "1F1B, samples in order, layout from b_min's profile", samples,
                                    report.entrain, ordered, false, false));
  report.runs.push_back(run_batches(context, "+ replica and stratified microbatch assignment", samples, report.entrain,
                                    hierarchical(work, p.dp, k, false), false, false));
  const ReplicaBatches deferred = hierarchical(work, p.dp, k, true);
  report.runs.push_back(run_batches(context, "+ pairwise deferral", samples, report.entrain, deferred, false, false));
  report.runs.push_back(run_batches(context, "+ split backward", samples, report.entrain, deferred, true, false));
  report.runs.push_back(
      run_batches(context, "+ eager forward (Entrain)", samples, report.entrain, deferred, true, true));

  // Fig. 4.15: Entrain under every other split of a replica's stage groups between the components.
  for (int encoder = 1; encoder < units; ++encoder) {
    ComponentConfig config = evaluate(context, p.dp, {encoder, units - encoder}, profile);
    if (config.encoder.layers.empty()) continue;
    const EntrainRun run = run_batches(context, "", samples, config, deferred, true, true);
    report.sensitivity.push_back({std::move(config), run.iteration, run.largest_memory, run.fits});
  }
  return report;
}

}  // namespace weft::entrain
