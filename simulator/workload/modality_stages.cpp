#include "simulator/workload/modality_stages.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "simulator/workload/stage_partition.hpp"
#include "simulator/workload/training_scenario.hpp"

namespace weft {
namespace {

[[noreturn]] void reject_modality_plan(const char* rule, const std::string& message,
                                       const std::string& path = "parallel.modality_stages") {
  throw InvalidPlan(path + ": " + message, rule);
}

// The modules reading module `m` directly.
std::vector<std::size_t> readers(const MultimodalSpec& model, std::size_t m) {
  std::vector<std::size_t> found;
  for (std::size_t later = m + 1; later < model.modules.size(); ++later) {
    const auto& inputs = model.modules[later].inputs;
    if (std::find(inputs.begin(), inputs.end(), m) != inputs.end()) found.push_back(later);
  }
  return found;
}

void check_model_shape(const MultimodalSpec& model) {
  std::size_t last_transformer = 0;
  for (std::size_t m = 0; m < model.modules.size(); ++m) {
    const ModuleSpec& module = model.modules[m];
    if (module.projector && module.inputs.front() != last_transformer) {
      reject_modality_plan("projector away from its module",
                           "projector '" + module.name + "' must be listed right after '" +
                               model.modules[module.inputs.front()].name +
                               "', the module it reads, to run on that module's last stage");
    }
    if (!module.projector) last_transformer = m;
    if (m + 1 < model.modules.size() && readers(model, m).size() != 1) {
      reject_modality_plan("module read by several modules",
                           "module '" + module.name +
                               "' is read by several modules; its stages can hand their output to one module only");
    }
  }
}

}  // namespace

std::size_t transformer_module_named(const JsonCursor& value, const MultimodalSpec& model, const std::string& name,
                                     std::string_view projector_note) {
  const auto module = std::find_if(model.modules.begin(), model.modules.end(),
                                   [&](const ModuleSpec& candidate) { return candidate.name == name; });
  if (module == model.modules.end()) value.fail("'" + name + "' is not a module of the model");
  if (module->projector) {
    value.fail("'" + name + "' is a projector: it runs on the last stage of the module it reads" +
               std::string(projector_note));
  }
  return static_cast<std::size_t>(module - model.modules.begin());
}

std::vector<int> read_modality_stages(const JsonCursor& json, const MultimodalSpec& model) {
  if (!model.multimodal()) json.fail("modality parallelism needs a model of several modules");
  std::vector<int> stages(model.modules.size(), 0);
  for (const auto& [name, value] : json.members()) {
    const std::size_t module = transformer_module_named(value, model, name, "");
    const std::int64_t count = value.as_positive_int();
    if (count > (1 << 20)) value.fail("expected at most 1048576");
    stages[module] = static_cast<int>(count);
  }
  for (std::size_t m = 0; m < model.modules.size(); ++m) {
    if (!model.modules[m].projector && stages[m] == 0) {
      json.fail("expected stages for module '" + model.modules[m].name + "' (every transformer module has its own)");
    }
  }
  return stages;
}

void check_modality_plan(const ParallelPlan& plan, const MultimodalSpec& model) {
  if (plan.vpp != 1) {
    reject_modality_plan("modality parallelism with vpp > 1", "modules on stages of their own need vpp = 1",
                         "parallel.vpp");
  }
  if (plan.schedule != PipelineSchedule::gpipe && plan.schedule != PipelineSchedule::one_f_one_b) {
    reject_modality_plan("modality parallelism with another schedule",
                         "modules on stages of their own run the gpipe or 1f1b schedule, not '" +
                             std::string(kPipelineScheduleNames.name(plan.schedule)) + "'",
                         "parallel.schedule");
  }
  check_model_shape(model);
  const int total = std::accumulate(plan.modality_stages.begin(), plan.modality_stages.end(), 0);
  if (total != plan.pp) {
    reject_modality_plan(
        "modality stages do not add up to pp",
        "the modules' stages add up to " + std::to_string(total) + ", parallel.pp is " + std::to_string(plan.pp));
  }
  for (std::size_t m = 0; m < model.modules.size(); ++m) {
    if (plan.modality_stages[m] > model.modules[m].layers()) {
      reject_modality_plan("more stages than layers", "module '" + model.modules[m].name + "' has " +
                                                          std::to_string(model.modules[m].layers()) + " layers for " +
                                                          std::to_string(plan.modality_stages[m]) + " stages");
    }
  }
  if (plan.stage_layers.size() != static_cast<std::size_t>(plan.pp)) return;  // the general check reports it
  std::size_t stage = 0;
  for (std::size_t m = 0; m < model.modules.size(); ++m) {
    int layers = 0;
    for (int k = 0; k < plan.modality_stages[m]; ++k) {
      const int in_stage = plan.stage_layers[stage++];
      if (in_stage == 0) {
        reject_modality_plan(
            "a stage without layers",
            "entry " + std::to_string(stage - 1) + " is 0: under modality parallelism every stage holds layers",
            "parallel.stage_layers");
      }
      layers += in_stage;
    }
    if (layers != model.modules[m].layers()) {
      reject_modality_plan("a stage across modules",
                           "the stages of module '" + model.modules[m].name + "' hold " + std::to_string(layers) +
                               " layers, the module has " + std::to_string(model.modules[m].layers()) +
                               " (a stage holds layers of one module)",
                           "parallel.stage_layers");
    }
  }
}

std::vector<std::pair<std::string, int>> named_modality_stages(const MultimodalSpec& model,
                                                               std::span<const int> module_stages) {
  std::vector<std::pair<std::string, int>> named;
  for (std::size_t m = 0; m < module_stages.size(); ++m) {
    if (module_stages[m] > 0) named.emplace_back(model.modules[m].name, module_stages[m]);
  }
  return named;
}

std::vector<int> partition_within_modules(std::span<const std::int64_t> layer_weights, const MultimodalSpec& model,
                                          std::span<const int> module_stages) {
  std::vector<int> layers;
  for (std::size_t m = 0; m < model.modules.size(); ++m) {
    if (module_stages[m] == 0) continue;
    const auto first = static_cast<std::size_t>(model.first_layer(m));
    const std::vector<int> split = partition_balanced(
        layer_weights.subspan(first, static_cast<std::size_t>(model.modules[m].layers())), module_stages[m]);
    layers.insert(layers.end(), split.begin(), split.end());
  }
  return layers;
}

}  // namespace weft
