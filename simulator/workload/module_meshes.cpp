#include "simulator/workload/module_meshes.hpp"

#include <algorithm>
#include <string>

#include "simulator/workload/modality_stages.hpp"
#include "simulator/workload/training_scenario.hpp"

namespace weft {
namespace {

[[noreturn]] void reject_meshes(const std::string& path, const char* rule, const std::string& message) {
  throw InvalidPlan(path + ": " + message, rule);
}

int read_mesh_degree(const JsonCursor& json) {
  const std::int64_t degree = json.as_positive_int();
  if (degree > (1 << 20)) json.fail("expected at most 1048576");
  return static_cast<int>(degree);
}

// Replica `replica`'s share of `count` whole things dealt over `replicas` as evenly as they go, the
// first replicas taking one more.
std::int64_t dealt(std::int64_t count, int replicas, int replica) {
  return count / replicas + (replica < count % replicas ? 1 : 0);
}

// The last module on the last stage of transformer module `module`: the projectors reading it
// run there (modality_stages.hpp), and the last of them hands the stage's output on.
std::size_t last_module_on_stage(const MultimodalSpec& model, std::size_t module) {
  std::size_t last = module;
  while (last + 1 < model.modules.size() && model.modules[last + 1].projector &&
         model.modules[last + 1].inputs.front() == module) {
    ++last;
  }
  return last;
}

}  // namespace

PositionMesh ParallelPlan::mesh_at(int position) const {
  if (per_module_meshes()) {
    for (std::size_t m = 0; m < modality_stages.size(); ++m) {
      if (position < modality_stages[m]) return module_meshes[m];
      position -= modality_stages[m];
    }
  }
  return {.tp = tp, .dp = dp};
}

ParallelDims ParallelPlan::dims() const {
  ParallelDims dims{.tp = tp, .cp = cp, .dp = dp, .pp = pp, .positions = {}};
  if (per_module_meshes()) {
    for (int position = 0; position < pp; ++position) dims.positions.push_back(mesh_at(position));
  }
  return dims;
}

void read_module_meshes(const JsonCursor& parallel, TrainingScenario& scenario) {
  const JsonCursor json = parallel.at("modules");
  ParallelPlan& plan = scenario.parallel;
  const MultimodalSpec& model = scenario.model;
  if (plan.modality_stages.empty()) {
    json.fail("modules on meshes of their own need parallel.modality_stages (each module on stages of its own)");
  }
  if (!parallel.find("dp")) {
    parallel.fail("expected \"dp\", the last module's data-parallel degree, with modules on meshes of their own");
  }
  plan.module_meshes.assign(model.modules.size(), PositionMesh{.tp = plan.tp, .dp = plan.dp});
  for (const auto& [name, value] : json.members()) {
    const std::size_t module = transformer_module_named(value, model, name, ", on that mesh");
    if (module + 1 == model.modules.size()) {
      value.fail("'" + name + "' is the last module: its mesh is parallel.tp and parallel.dp");
    }
    value.expect_only({"tp", "dp"});
    PositionMesh& mesh = plan.module_meshes[module];
    if (auto tp = value.find("tp")) mesh.tp = read_mesh_degree(*tp);
    if (auto dp = value.find("dp")) mesh.dp = read_mesh_degree(*dp);
  }
  give_projectors_their_readers_meshes(model, plan.module_meshes);
}

void give_projectors_their_readers_meshes(const MultimodalSpec& model, std::vector<PositionMesh>& meshes) {
  for (std::size_t m = 0; m < model.modules.size(); ++m) {
    if (model.modules[m].projector) meshes[m] = meshes[model.modules[m].inputs.front()];
  }
}

void validate_module_meshes(const TrainingScenario& s) {
  const ParallelPlan& p = s.parallel;
  if (!p.per_module_meshes()) return;
  auto refuse = [](const std::string& path, const char* rule, const std::string& what) {
    reject_meshes(path, rule, what + " is not simulated with modules on meshes of their own (parallel.modules)");
  };
  if (s.cluster.stragglers || !s.cluster.node_groups.empty()) {
    refuse("cluster", "module meshes on a mixed or straggling cluster", "a cluster with stragglers or GPU types");
  }
  if (p.zero >= 3) refuse("parallel.zero", "module meshes with zero 3", "ZeRO-3");
  if (p.dp_shard > 0) refuse("parallel.dp_shard", "module meshes with hybrid sharding", "hybrid sharding");
  const std::int64_t slot = s.training.micro_batch * p.dp;
  for (std::size_t m = 0; m < s.model.modules.size(); ++m) {
    const ModuleSpec& module = s.model.modules[m];
    const int dp = p.module_meshes[m].dp;
    if (module.projector || slot % dp == 0) continue;
    const std::string path = "parallel.modules." + module.name + ".dp";
    if (module.tokens != TokenSource::images) {
      reject_meshes(path, "a slot that does not split over the module's replicas",
                    std::to_string(dp) + " does not divide a slot's " + std::to_string(slot) +
                        " samples (training.micro_batch x parallel.dp), and module '" + module.name +
                        "' deals them whole (only an image encoder deals a slot's images)");
    }
    if (!s.data && slot * s.training.images < dp) {  // per-sample data: each slot its own images
      reject_meshes(
          path, "more replicas than a slot's images",
          std::to_string(dp) + " replicas for the " + std::to_string(slot * s.training.images) + " images of a slot");
    }
  }
}

void check_simulated_meshes(const TrainingScenario& s) {
  const ParallelPlan& p = s.parallel;
  if (!s.data || !p.per_module_meshes()) return;
  // Each replica of the last module draws its own samples; a replica of another DP takes a share
  // of every replica's slot, which only an image encoder's whole images deal out.
  for (std::size_t m = 0; m < s.model.modules.size(); ++m) {
    const ModuleSpec& module = s.model.modules[m];
    if (module.projector || p.module_meshes[m].dp == p.dp || module.tokens == TokenSource::images) continue;
    reject_meshes("parallel.modules." + module.name + ".dp", "module meshes of another DP on per-sample data",
                  "with per-sample data only an image encoder's DP may differ from parallel.dp (its replicas deal a "
                  "slot's images); module '" +
                      module.name + "' takes its tokens from " + std::string(kTokenSourceNames.name(module.tokens)) +
                      ": give it parallel.dp, or simulate it on uniform samples");
  }
}

SampleShape slot_of(const MicrobatchShapes& shapes, int k) {
  SampleShape slot;
  for (int replica = 0; replica < shapes.replicas; ++replica) add_counts(slot, shapes.at(replica, k));
  return slot;
}

MicrobatchShapes module_replica_shapes(const MicrobatchShapes& shapes, int dp, std::int64_t pad_to) {
  MicrobatchShapes out;
  out.replicas = dp;
  out.microbatches = shapes.microbatches;
  out.shapes.resize(static_cast<std::size_t>(dp) * static_cast<std::size_t>(shapes.microbatches));
  for (int k = 0; k < shapes.microbatches; ++k) {
    const SampleShape slot = slot_of(shapes, k);
    for (int e = 0; e < dp; ++e) {
      SampleShape& share = out.shapes[static_cast<std::size_t>(e) * static_cast<std::size_t>(shapes.microbatches) +
                                      static_cast<std::size_t>(k)];
      share.seq_len = pad_to;
      share.images = dealt(slot.images, dp, e);
      share.frames = dealt(slot.frames, dp, e);  // never more than its images: the first take one more of each
    }
  }
  out.own = out.shapes;
  return out;
}

std::string describe_module_meshes(const TrainingScenario& s) {
  const ParallelPlan& p = s.parallel;
  std::string text;
  for (std::size_t m = 0; m < p.modality_stages.size(); ++m) {
    const int stages = p.modality_stages[m];
    if (stages == 0) continue;
    const PositionMesh mesh = p.module_meshes[m];
    if (!text.empty()) text += "; ";
    text += s.model.modules[m].name + " " + std::to_string(stages) + (stages == 1 ? " stage" : " stages") + " x tp " +
            std::to_string(mesh.tp) + (p.cp > 1 ? " x cp " + std::to_string(p.cp) : "") + " x dp " +
            std::to_string(mesh.dp) + " = " + std::to_string(std::int64_t{stages} * mesh.tp * p.cp * mesh.dp) + " GPUs";
  }
  return text;
}

ModuleShard module_shard(const TrainingScenario& s, std::size_t module, const ShardContext& base,
                         const SampleShape& sample) {
  const ParallelPlan& p = s.parallel;
  ModuleShard shard{.context = base, .sample = sample, .work_share = 1.0};
  if (!p.per_module_meshes()) return shard;
  const PositionMesh mesh = p.module_meshes[module];
  shard.context.tp = mesh.tp;
  shard.context.sequence_parallel = p.sequence_parallel && mesh.tp > 1;
  if (mesh.dp == p.dp || s.data) return shard;
  const std::int64_t slot = base.micro_batch * p.dp;
  if (slot % mesh.dp == 0) {
    shard.context.micro_batch = slot / mesh.dp;
    return shard;
  }
  // Whole images, as evenly as they go: the first replicas take one more, and one of them is
  // simulated.
  const std::int64_t images = slot * sample.images;
  const std::int64_t busiest = dealt(images, mesh.dp, 0);
  shard.context.micro_batch = 1;
  shard.sample.images = busiest;
  shard.sample.frames = dealt(slot * sample.frames, mesh.dp, 0);
  if (busiest > 0) shard.work_share = static_cast<double>(images) / static_cast<double>(busiest * mesh.dp);
  return shard;
}

std::size_t module_at(const TrainingScenario& s, int position) {
  const std::vector<int>& stages = s.parallel.modality_stages;
  for (std::size_t m = 0; m < stages.size(); ++m) {
    if (position < stages[m]) return m;
    position -= stages[m];
  }
  return s.model.modules.size() - 1;
}

Bytes relay_bytes(const TrainingScenario& s, int from, int to, const std::optional<SampleShape>& slot) {
  const ParallelPlan& p = s.parallel;
  if (!p.per_module_meshes() || p.mesh_at(from).dp == p.mesh_at(to).dp) return 0;
  const ModuleSpec& sender = s.model.modules[last_module_on_stage(s.model, module_at(s, from))];
  const std::int64_t tokens =
      slot ? module_tokens(sender, *slot) : s.training.micro_batch * p.dp * module_tokens(sender, s.training.sample());
  return 2 * tokens * sender.output_width() * bytes_per_element(s.training.dtype);
}

}  // namespace weft
