#include "simulator/planner/dflop/full_simulation.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "simulator/engine/engine.hpp"
#include "simulator/workload/modality_stages.hpp"
#include "simulator/workload/training_report.hpp"
#include "simulator/workload/training_workload.hpp"

namespace weft::dflop {
namespace {

// The layout as a weft scenario: the encoder component's module (with its projectors) on E_pp
// stages of its mesh, the LLM on L_pp stages of its own, each stage holding the layers `stages`
// give it; data parallel without ZeRO, as DFLOP's framework and its memory model (Eqs. 4 - 5) run.
// InvalidPlan where the model has more than one encoder transformer, as validation says.
TrainingScenario layout_scenario(const TrainingScenario& base, const DflopPlan& plan, const StageLayers& stages,
                                 const SampleShape& sample, std::int64_t per_bucket) {
  TrainingScenario s = base;
  s.data.reset();
  s.training.micro_batch = per_bucket;
  s.training.global_batch = std::int64_t{plan.microbatches} * plan.llm.dp * per_bucket;
  s.training.seq_len = sample.seq_len;
  s.training.images = sample.images;
  s.training.frames = sample.frames;
  ParallelPlan p;
  p.tp = plan.llm.tp;
  p.dp = plan.llm.dp;
  p.pp = plan.encoder.pp + plan.llm.pp;
  p.sequence_parallel = base.parallel.sequence_parallel;
  p.recompute = base.parallel.recompute;
  p.recompute_layers = base.parallel.recompute_layers;
  const auto& modules = s.model.modules;
  const std::size_t last = modules.size() - 1;
  if (std::count_if(modules.begin(), modules.end() - 1, [](const ModuleSpec& m) { return !m.projector; }) != 1) {
    throw InvalidPlan("model: more than one encoder transformer before the LLM", "several encoders");
  }
  for (std::size_t m = 0; m < modules.size(); ++m) {
    const bool llm = m == last;
    p.modality_stages.push_back(modules[m].projector ? 0 : llm ? plan.llm.pp : plan.encoder.pp);
    const ModuleLayout& mesh = llm ? plan.llm : plan.encoder;
    p.module_meshes.push_back({.tp = mesh.tp, .dp = mesh.dp});
  }
  p.stage_layers = stages.encoder;
  p.stage_layers.insert(p.stage_layers.end(), stages.llm.begin(), stages.llm.end());
  s.parallel = std::move(p);
  pad_vocabulary(s);
  check_modality_plan(s.parallel, s.model);
  validate_training_scenario(s);
  return s;
}

}  // namespace

FullSimulation simulate_layout(const TrainingScenario& base, ModelCosts& costs, std::string layout,
                               const DflopPlan& plan, const StageLayers& stages, const DatasetProfile& data,
                               std::int64_t global_batch, std::int64_t pad_to) {
  FullSimulation out;
  out.layout = std::move(layout);
  out.plan = plan;
  const std::int64_t buckets = std::int64_t{plan.microbatches} * plan.llm.dp;
  const std::int64_t per_bucket = (global_batch + buckets - 1) / buckets;
  out.samples = buckets * per_bucket;
  const std::int64_t images = std::max<std::int64_t>(1, std::llround(data.mean_images));
  const std::int64_t frames = std::min<std::int64_t>(images, std::llround(data.mean_frames));
  const std::int64_t image_tokens = base.model.sequence_tokens().of(images, frames);
  out.sample = {.seq_len = padded(std::max<std::int64_t>(std::llround(data.mean_tokens), image_tokens), pad_to),
                .images = images,
                .frames = frames};

  // The stage model on the same samples: bucket j holds samples [j x per_bucket, (j + 1) x per_bucket).
  const std::vector<SampleShape> samples(static_cast<std::size_t>(out.samples), out.sample);
  std::vector<std::vector<std::size_t>> split(static_cast<std::size_t>(buckets));
  for (std::size_t i = 0; i < samples.size(); ++i) split[i / static_cast<std::size_t>(per_bucket)].push_back(i);
  out.stage_model_s = static_cast<double>(time_iteration(costs, plan, stages, samples, split, pad_to)) / kNsPerSecond;

  TrainingScenario scenario;
  TrainingWorkload workload;
  try {
    scenario = layout_scenario(base, plan, stages, out.sample, per_bucket);
    workload = build_training_workload(scenario, {.name_ops = false});
  } catch (const InputError& error) {  // a plan the simulation refuses, or one too large to build
    out.refused = error.what();
    return out;
  }
  const SimulationResult result = simulate(workload.graph, *workload.cost_model, {});
  const TrainingReport report = make_training_report(scenario, workload, result);
  out.iteration_s = report.iteration_time_s;
  out.samples_per_s = report.samples_per_s;
  out.out_of_memory = report.oom;
  return out;
}

}  // namespace weft::dflop
