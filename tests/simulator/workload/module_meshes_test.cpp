// Modules on meshes of their own (parallel.modules): DFLOP's per-module TP and DP (papers/003 §4)
// in the training simulation, checked against uniform plans that run the same work and against
// counts by hand.
#include "simulator/workload/module_meshes.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "simulator/workload/training_scenario.hpp"
#include "tests/simulator/workload/multimodal_test_support.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using test::kImageTokens;
using test::kLanguageHidden;
using test::run_training;
using test::scenario_from;
using test::scenario_text;
using test::TrainingRun;

// The small VLM (multimodal_test_support.hpp) on 8 H100s of one node, vision on stage 0 and the
// language model on stage 1; 8 samples of `images` images in microbatches of `micro_batch`.
// Transfers and TP collectives cost nothing and the host keeps ahead, so that a pass takes its
// kernels' time wherever it runs.
std::string vlm(const std::string& parallel, int images, const std::string& extra_options = "", int micro_batch = 1) {
  std::string text = scenario_text(
      test::vlm_model(false, false), parallel,
      fmt::format(R"({{"global_batch": 8, "micro_batch": {}, "seq_len": 256, "images": {}}})", micro_batch, images));
  text.insert(text.rfind('}'), R"(, "options": {"ideal_network": true, "host_issue": false)" + extra_options + "}");
  return text;
}

// Vision at TP1 on `vision_dp` GPUs, the language model at TP2 DP2 on 4.
std::string meshed(int vision_dp, int vision_tp = 1) {
  return fmt::format(R"({{"tp": 2, "pp": 2, "dp": 2, "modality_stages": {{"vision": 1, "language": 1}},
                          "modules": {{"vision": {{"tp": {}, "dp": {}}}}}}})",
                     vision_tp, vision_dp);
}

// Every stage at TP `tp`, DP `dp`.
std::string uniform(int tp, int dp) {
  return fmt::format(R"({{"tp": {}, "pp": 2, "dp": {}, "modality_stages": {{"vision": 1, "language": 1}}}})", tp, dp);
}

// The small VLM on `gpus` GPUs, each language replica drawing its own samples of the tiled image
// dataset (sequences of up to 512 tokens).
std::string per_sample_vlm(const std::string& parallel, int gpus) {
  std::string text = vlm(parallel, 0);
  text.replace(text.find(R"("images": 0)"), 11, R"("images": 0, "seq_len": 512)");
  text.replace(text.find(R"("seq_len": 256, )"), 16, "");
  text.replace(text.find(R"("gpus": 8)"), 9, R"("gpus": )" + std::to_string(gpus));
  text.insert(text.rfind('}'), R"(, "data": {"dataset": "tiled-image-qa", "seed": 3, "pad_to": 128})");
  return text;
}

TimeNs pass_time(const TrainingRun& run, int stage, PassKind kind) {
  const auto& passes = run.workload.passes;
  const auto it = std::find_if(passes.begin(), passes.end(), [&](const PassOp& p) {
    return p.stage == stage && p.action.kind == kind && p.action.microbatch == 0 && !p.recompute;
  });
  REQUIRE(it != passes.end());
  return run.result.end(it->op) - run.result.start(it->op);
}

const SimulatedRank& rank_of_stage(const TrainingRun& run, int stage) {
  const auto it = std::find_if(run.workload.ranks.begin(), run.workload.ranks.end(),
                               [&](const SimulatedRank& r) { return r.coordinates.pp == stage; });
  REQUIRE(it != run.workload.ranks.end());
  return *it;
}

// The op named `name`, if any.
std::optional<OpId> find_op(const Graph& graph, std::string_view name) {
  for (std::uint32_t i = 0; i < graph.op_count(); ++i) {
    if (graph.op_name(OpId(i)) == name) return OpId(i);
  }
  return std::nullopt;
}

// The GPUs of every simulated rank of pipeline position `stage`.
std::set<DeviceId> devices_of_stage(const TrainingRun& run, int stage) {
  std::set<DeviceId> devices;
  for (const SimulatedRank& rank : run.workload.ranks) {
    if (rank.coordinates.pp == stage) devices.insert(rank.device);
  }
  return devices;
}

// The ops whose names hold `what`, on the GPU of `stage`, with their communicators.
std::vector<const CommGroup*> groups_of(const TrainingRun& run, int stage, std::string_view what) {
  std::vector<const CommGroup*> groups;
  const Graph& graph = run.workload.graph;
  for (std::uint32_t i = 0; i < graph.op_count(); ++i) {
    const OpId op(i);
    if (graph.op_name(op).find(what) == std::string_view::npos) continue;
    if (graph.op_device(op) != rank_of_stage(run, stage).device) continue;
    groups.push_back(&run.workload.cost_model->group(graph.op_work(op).comm_group));
  }
  return groups;
}

TEST_CASE("module meshes: each module's stages on GPUs of their own, at its own TP and DP", "[workload][meshes]") {
  const TrainingScenario scenario = scenario_from(vlm(meshed(4), 2));
  const ParallelPlan& p = scenario.parallel;
  CHECK(p.mesh_at(0) == PositionMesh{.tp = 1, .dp = 4});
  CHECK(p.mesh_at(1) == PositionMesh{.tp = 2, .dp = 2});
  // vision, projector (on vision's mesh), language.
  CHECK(p.module_meshes == std::vector<PositionMesh>{{1, 4}, {1, 4}, {2, 2}});
  CHECK(p.world_size() == 1 * 4 + 2 * 2);
  CHECK(describe_module_meshes(scenario) ==
        "vision 1 stage x tp 1 x dp 4 = 4 GPUs; language 1 stage x tp 2 x dp 2 = 4 GPUs");

  const TrainingRun run = run_training(scenario, {.composites = false});
  // Vision holds GPUs 0-3; the language model's first rank is GPU 4.
  CHECK(rank_of_stage(run, 0).rank == 0);
  CHECK(rank_of_stage(run, 1).rank == 4);
  // Gradients are reduced over each module's own replicas; TP collectives only on the language
  // model's mesh.
  for (const CommGroup* group : groups_of(run, 0, "grad all-reduce")) CHECK(group->size == 4);
  for (const CommGroup* group : groups_of(run, 1, "grad all-reduce")) CHECK(group->size == 2);
  CHECK(!groups_of(run, 0, "grad all-reduce").empty());
  CHECK(!groups_of(run, 1, "grad all-reduce").empty());
  const std::vector<const CommGroup*> tp = groups_of(run, 1, "tp_reduce");
  CHECK(!tp.empty());
  for (const CommGroup* group : tp) CHECK(group->size == 2);
  CHECK(groups_of(run, 0, "tp_").empty());
}

TEST_CASE("module meshes: ParallelDims places each position's ranks after the positions before it",
          "[workload][meshes]") {
  ParallelDims dims{.tp = 2, .cp = 1, .dp = 4, .pp = 4, .positions = {{1, 8}, {2, 4}, {2, 4}, {2, 4}}};
  CHECK(dims.world_size() == 8 + 3 * 8);
  CHECK(dims.first_rank(2) == 16);
  // Stage 2, TP rank 1 of DP replica 2: 16 + 1 + 2 x 2.
  CHECK(dims.rank_of({.tp = 1, .cp = 0, .dp = 2, .pp = 2}) == 21);
  for (std::int64_t rank = 0; rank < dims.world_size(); ++rank) CHECK(dims.rank_of(dims.coordinates_of(rank)) == rank);
  // Without positions, Megatron's order: tp fastest, then cp, dp and pp.
  const ParallelDims plain{.tp = 4, .cp = 2, .dp = 3, .pp = 2, .positions = {}};
  CHECK(plain.rank_of({.tp = 3, .cp = 1, .dp = 2, .pp = 1}) == 3 + 4 * (1 + 2 * (2 + 3 * 1)));
  for (std::int64_t rank = 0; rank < plain.world_size(); ++rank)
    CHECK(plain.rank_of(plain.coordinates_of(rank)) == rank);
}

TEST_CASE("module meshes: an encoder replica's share of a slot costs what the same work costs on a uniform plan",
          "[workload][meshes]") {
  // A slot is the language model's 2 replicas' microbatch of one sample each.
  SECTION("2 samples of 2 images over 4 replicas: one image each") {
    const TrainingRun run = run_training(scenario_from(vlm(meshed(4), 2)));
    // Every stage at TP1 on microbatches of one 1-image sample does the vision stage's work.
    const TrainingRun one_image = run_training(scenario_from(vlm(uniform(1, 4), 1)));
    const TrainingRun language = run_training(scenario_from(vlm(uniform(2, 2), 2)));
    for (const PassKind kind : {PassKind::forward, PassKind::backward}) {
      CHECK(pass_time(run, 0, kind) == pass_time(one_image, 0, kind));
      CHECK(pass_time(run, 1, kind) == pass_time(language, 1, kind));
    }
    CHECK(rank_of_stage(run, 0).parameters == rank_of_stage(one_image, 0).parameters);
    CHECK(rank_of_stage(run, 1).parameters == rank_of_stage(language, 1).parameters);
  }
  SECTION("2 samples of 3 images over 4 replicas: whole images, the busiest replica 2") {
    const TrainingRun run = run_training(scenario_from(vlm(meshed(4), 3)));
    const TrainingRun two_images = run_training(scenario_from(vlm(uniform(1, 4), 2)));
    for (const PassKind kind : {PassKind::forward, PassKind::backward})
      CHECK(pass_time(run, 0, kind) == pass_time(two_images, 0, kind));
  }
  SECTION("2 samples over 1 replica: both samples") {
    // Vision at TP4 DP1 on 4 GPUs: each microbatch slot's 2 samples at TP4.
    const TrainingRun run = run_training(scenario_from(vlm(meshed(1, 4), 2)));
    const TrainingRun two_samples = run_training(scenario_from(vlm(uniform(4, 1), 2, "", 2)));
    for (const PassKind kind : {PassKind::forward, PassKind::backward})
      CHECK(pass_time(run, 0, kind) == pass_time(two_samples, 0, kind));
  }
}

TEST_CASE("module meshes: per-sample data where every module has the last one's DP", "[workload][meshes][data]") {
  // Each DP replica draws its own samples of the tiled image dataset; vision at TP1, the language
  // model at TP2, both at DP2, on 6 GPUs. Every pass costs what the same drawn microbatch costs on a
  // uniform plan at its module's TP (the draws depend on DP and the microbatches, not on TP).
  const TrainingRun run = run_training(scenario_from(per_sample_vlm(
      R"({"tp": 2, "pp": 2, "dp": 2, "modality_stages": {"vision": 1, "language": 1}, "modules": {"vision": {"tp": 1}}})",
      6)));
  const TrainingRun vision = run_training(scenario_from(per_sample_vlm(uniform(1, 2), 4)));
  const TrainingRun language = run_training(scenario_from(per_sample_vlm(uniform(2, 2), 8)));
  REQUIRE(run.workload.per_replica);
  auto duration = [](const TrainingRun& r, const PassOp& pass) {
    return r.result.end(pass.op) - r.result.start(pass.op);
  };
  std::size_t compared = 0;
  for (const PassOp& pass : run.workload.passes) {
    const TrainingRun& reference = pass.stage == 0 ? vision : language;
    const auto same =
        std::find_if(reference.workload.passes.begin(), reference.workload.passes.end(), [&](const PassOp& other) {
          return other.stage == pass.stage && other.replica == pass.replica && other.action.kind == pass.action.kind &&
                 other.action.microbatch == pass.action.microbatch && other.recompute == pass.recompute;
        });
    REQUIRE(same != reference.workload.passes.end());
    CHECK(duration(run, pass) == duration(reference, *same));
    ++compared;
  }
  CHECK(compared == 2 * 2 * 4 * 2);  // replicas x stages x microbatches x (forward, backward)
}

TEST_CASE("module meshes: per-sample data with an image encoder of another DP", "[workload][meshes][data]") {
  // Vision at TP1 DP4 on 4 GPUs, the language model at TP2 DP2 on 4; each language replica draws
  // its own samples of the tiled image dataset, 4 microbatches each. Slot k is microbatch k of
  // both language replicas; the 4 vision replicas deal its images, whole, the first ones taking
  // one more. Transfers cost nothing, so the communicator hands a slot on as its last share ends.
  const std::string text = per_sample_vlm(meshed(4), 8);
  const TrainingRun run = run_training(scenario_from(text));
  REQUIRE(run.workload.per_replica);
  REQUIRE(run.workload.shapes);
  const MicrobatchShapes& drawn = *run.workload.shapes;
  REQUIRE(drawn.replicas == 2);
  REQUIRE(drawn.microbatches == 4);
  auto find_pass = [&](int stage, int replica, PassKind kind, int mb) -> const PassOp& {
    const auto& passes = run.workload.passes;
    const auto it = std::find_if(passes.begin(), passes.end(), [&](const PassOp& p) {
      return p.stage == stage && p.replica == replica && p.action.kind == kind && p.action.microbatch == mb &&
             !p.recompute;
    });
    REQUIRE(it != passes.end());
    return *it;
  };
  auto start = [&](const PassOp& pass) { return run.result.start(pass.op); };
  auto end = [&](const PassOp& pass) { return run.result.end(pass.op); };
  // One pass of `images` images on the vision stage of a uniform plan at TP1, forward and back.
  std::map<std::int64_t, std::pair<TimeNs, TimeNs>> uniform_pass;
  auto vision_pass = [&](std::int64_t images) {
    auto [it, made] = uniform_pass.try_emplace(images);
    if (made) {
      const TrainingRun reference = run_training(scenario_from(vlm(uniform(1, 4), static_cast<int>(images))));
      it->second = {pass_time(reference, 0, PassKind::forward), pass_time(reference, 0, PassKind::backward)};
    }
    return it->second;
  };
  std::size_t shares = 0;
  for (int k = 0; k < 4; ++k) {
    const std::int64_t slot = drawn.at(0, k).images + drawn.at(1, k).images;
    TimeNs last_share_end = 0;
    for (int e = 0; e < 4; ++e) {
      const std::int64_t images = slot / 4 + (e < slot % 4 ? 1 : 0);
      const PassOp& forward = find_pass(0, e, PassKind::forward, k);
      last_share_end = std::max(last_share_end, end(forward));
      if (images == 0) continue;
      const auto [forward_ns, backward_ns] = vision_pass(images);
      CHECK(end(forward) - start(forward) == forward_ns);
      const PassOp& backward = find_pass(0, e, PassKind::backward, k);
      CHECK(end(backward) - start(backward) == backward_ns);
      ++shares;
    }
    // Each language replica's forward waits for the slot's last share. Back, the communicator
    // reads both language replicas' input gradients and hands each vision replica its share.
    for (int r = 0; r < 2; ++r) CHECK(start(find_pass(1, r, PassKind::forward, k)) >= last_share_end);
    const Graph& graph = run.workload.graph;
    const auto relay = find_op(graph, fmt::format("relay gradient mb{} stage 1 -> 0", k));
    REQUIRE(relay);
    std::set<DeviceId> from, to;
    for (TensorId tensor : graph.op_inputs(*relay)) from.insert(graph.tensor_device(tensor));
    for (TensorId tensor : graph.op_outputs(*relay)) to.insert(graph.tensor_device(tensor));
    CHECK(from == devices_of_stage(run, 1));
    CHECK(to == devices_of_stage(run, 0));
    for (int r = 0; r < 2; ++r) CHECK(run.result.start(*relay) >= start(find_pass(1, r, PassKind::backward, k)));
    for (int e = 0; e < 4; ++e) CHECK(start(find_pass(0, e, PassKind::backward, k)) >= run.result.end(*relay));
    if (k == 0) {  // nothing else holds up the first slot's language forwards
      for (int r = 0; r < 2; ++r) CHECK(start(find_pass(1, r, PassKind::forward, k)) == last_share_end);
    }
  }
  CHECK(shares > 8);
  // The vision mesh's 4 ranks are simulated one by one, beside the language model's 2 replicas.
  CHECK(run.workload.ranks.size() == 4 + 2);
  // An encoder's FLOPs follow its images: dealt over 4 replicas or run by 2, the same in all.
  const TrainingRun same_dp = run_training(scenario_from(per_sample_vlm(meshed(2), 6)));
  CHECK(run.workload.model_flops_per_iteration == Approx(same_dp.workload.model_flops_per_iteration).epsilon(1e-12));
}

TEST_CASE("module meshes: on per-sample data only an image encoder's DP may differ", "[workload][meshes][data]") {
  // The two-encoder model's vision and audio encoders at DP2 beside the language model's DP4.
  std::string text =
      scenario_text(test::kTwoEncoderModel,
                    R"({"tp": 1, "pp": 3, "dp": 4, "modality_stages": {"vision": 1, "audio": 1, "language": 1},
          "modules": {"vision": {"dp": 2}, "audio": {"dp": 2}}})",
                    R"({"global_batch": 8, "micro_batch": 1, "seq_len": 512})");
  text.insert(text.rfind('}'), R"(, "data": {"dataset": {"name": "clips", "mixture": [{"name": "clip", "weight": 1,
      "text_tokens": {"distribution": "uniform", "min": 16, "max": 64}, "images": {"distribution": "uniform", "min": 1,
      "max": 2}, "audio_seconds": {"distribution": "uniform", "min": 1, "max": 4}}]}, "seed": 1, "pad_to": 128})");
  CHECK_THROWS_WITH(run_training(scenario_from(text)),
                    Contains("parallel.modules.audio.dp: with per-sample data only an image encoder's DP may differ "
                             "from parallel.dp (its replicas deal a slot's images); module 'audio' takes its tokens "
                             "from audio"));
}

TEST_CASE("module meshes: a mesh that is the plan's own changes nothing", "[workload][meshes]") {
  std::string text = vlm(meshed(2, 2), 2);
  text.replace(text.find(R"("ideal_network": true)"), 21, R"("ideal_network": false)");
  const TrainingRun run = run_training(scenario_from(text));
  std::string plain = vlm(uniform(2, 2), 2);
  plain.replace(plain.find(R"("ideal_network": true)"), 21, R"("ideal_network": false)");
  const TrainingRun reference = run_training(scenario_from(plain));
  CHECK(run.result.makespan == reference.result.makespan);
  CHECK(run.workload.model_flops_per_iteration == reference.workload.model_flops_per_iteration);
  for (std::size_t stage = 0; stage < 2; ++stage) {
    CHECK(run.report.stages[stage].peak_memory == reference.report.stages[stage].peak_memory);
    CHECK(run.report.stages[stage].compute_s == reference.report.stages[stage].compute_s);
  }
}

TEST_CASE("module meshes: ZeRO shards each module's states over its own replicas", "[workload][meshes]") {
  auto with_zero = [](std::string parallel) { return parallel.insert(parallel.find(R"("pp")"), R"("zero": 1, )"); };
  const TrainingRun run = run_training(scenario_from(vlm(with_zero(meshed(4)), 2)));
  const TrainingRun vision = run_training(scenario_from(vlm(with_zero(uniform(1, 4)), 1)));
  const TrainingRun language = run_training(scenario_from(vlm(with_zero(uniform(2, 2)), 2)));
  const StaticMemory& encoder = rank_of_stage(run, 0).static_memory;
  CHECK(encoder.optimizer_states == rank_of_stage(vision, 0).static_memory.optimizer_states);
  CHECK(rank_of_stage(run, 1).static_memory.optimizer_states ==
        rank_of_stage(language, 1).static_memory.optimizer_states);
  // By hand: 12 bytes of Adam states and main weights per trained parameter, over 4 replicas.
  CHECK(encoder.optimizer_states == 12 * rank_of_stage(run, 0).parameters / 4);
}

TEST_CASE("module meshes: model FLOPs are the model's, whatever its meshes", "[workload][meshes]") {
  for (const int images : {2, 3}) {
    const TrainingRun run = run_training(scenario_from(vlm(meshed(4), images)));
    const TrainingRun reference = run_training(scenario_from(vlm(uniform(2, 2), images)));
    CHECK(run.workload.model_flops_per_iteration ==
          Approx(reference.workload.model_flops_per_iteration).epsilon(1e-12));
  }
}

TEST_CASE("module meshes: DFLOP's communicator relays a slot between meshes of different DP", "[workload][meshes]") {
  auto send_bytes = [](const TrainingRun& run, std::string_view what) {
    const Graph& graph = run.workload.graph;
    std::vector<Bytes> bytes;
    for (std::uint32_t i = 0; i < graph.op_count(); ++i) {
      if (graph.op_name(OpId(i)).find(what) != std::string_view::npos)
        bytes.push_back(graph.op_work(OpId(i)).network_bytes);
    }
    return bytes;
  };
  // Vision DP4, language DP2: the slot's 2 samples x 2 images x 16 tokens of the projector's
  // width (the language model's hidden, 512) in bf16, gathered on one rank and scattered again.
  const Bytes relay = 2 * (2 * 2 * kImageTokens * kLanguageHidden * 2);
  const TrainingRun relayed = run_training(scenario_from(vlm(meshed(4), 2)), {.composites = false});
  for (const std::string_view what : {"send activation mb", "send gradient mb"}) {
    const std::vector<Bytes> bytes = send_bytes(relayed, what);
    CHECK(bytes.size() == 4);  // 8 samples in microbatches of 1 over the language model's 2 replicas
    for (const Bytes b : bytes) CHECK(b == relay);
  }
  // Vision TP2 DP2 feeds the language model's replicas one to one, as a uniform plan does.
  const TrainingRun direct = run_training(scenario_from(vlm(meshed(2, 2), 2)), {.composites = false});
  const TrainingRun reference = run_training(scenario_from(vlm(uniform(2, 2), 2)), {.composites = false});
  CHECK(send_bytes(direct, "send activation mb") == send_bytes(reference, "send activation mb"));
  CHECK(send_bytes(direct, "send activation mb").front() < relay);
}

TEST_CASE("module meshes: what the plan cannot hold is refused with the field", "[workload][meshes][errors]") {
  auto rejects = [](const std::string& text, const std::string& message) {
    CHECK_THROWS_WITH(scenario_from(text), Contains(message));
  };
  rejects(vlm(R"({"tp": 2, "pp": 2, "dp": 2, "modules": {"vision": {"tp": 1}}})", 2),
          "parallel.modules: modules on meshes of their own need parallel.modality_stages");
  auto with_modules = [](const std::string& modules, const std::string& rest = R"("dp": 2)") {
    return fmt::format(R"({{"tp": 2, "pp": 2, {}, "modality_stages": {{"vision": 1, "language": 1}}, "modules": {}}})",
                       rest, modules);
  };
  rejects(vlm(with_modules(R"({"audio": {"tp": 1}})"), 2), "parallel.modules.audio: 'audio' is not a module");
  rejects(vlm(with_modules(R"({"projector": {"tp": 1}})"), 2), "'projector' is a projector");
  rejects(vlm(with_modules(R"({"language": {"tp": 1}})"), 2),
          "'language' is the last module: its mesh is parallel.tp and parallel.dp");
  rejects(vlm(with_modules(R"({"vision": {"pp": 1}})"), 2), "parallel.modules.vision");
  rejects(vlm(with_modules(R"({"vision": {"tp": 0}})"), 2), "parallel.modules.vision.tp");
  rejects(vlm(with_modules(R"({"vision": {"tp": 1}})", R"("cp": 1)"), 2),
          "parallel: expected \"dp\", the last module's data-parallel degree");
  // 4 attention heads.
  rejects(vlm(meshed(1, 3), 2), "parallel.modules.vision.tp: module 'vision': 3 does not divide attention heads 4");
  rejects(vlm(meshed(8), 4),
          "parallel.modules: the modules' meshes hold 12 GPUs (vision 1 stage x tp 1 x dp 8 = 8 GPUs; language 1 "
          "stage x tp 2 x dp 2 = 4 GPUs), not the cluster's 8");
  // A slot of 2 one-image samples cannot feed 4 replicas.
  rejects(vlm(meshed(4), 1), "parallel.modules.vision.dp: 4 replicas for the 2 images of a slot");
  rejects(vlm(R"({"tp": 2, "pp": 2, "dp": 2, "zero": 3, "modality_stages": {"vision": 1, "language": 1},
                  "modules": {"vision": {"tp": 1, "dp": 4}}})",
              2),
          "parallel.zero: ZeRO-3 is not simulated with modules on meshes of their own");
  CHECK_THROWS_WITH(run_training(scenario_from(vlm(meshed(4), 2)), true),
                    Contains("--unfold: modules on meshes of their own (parallel.modules) are simulated folded"));
}

TEST_CASE("module meshes: an encoder of whole samples needs a DP that divides the slot", "[workload][meshes][errors]") {
  // Vision (TP1 DP1) and audio (TP1 DP3) beside the language model (TP2 DP2): 1 + 3 + 4 GPUs.
  const std::string parallel = R"({"tp": 2, "pp": 3, "dp": 2,
      "modality_stages": {"vision": 1, "audio": 1, "language": 1},
      "modules": {"vision": {"tp": 1, "dp": 1}, "audio": {"tp": 1, "dp": 3}}})";
  CHECK_THROWS_WITH(
      scenario_from(scenario_text(test::kTwoEncoderModel, parallel,
                                  R"({"global_batch": 8, "seq_len": 256, "images": 2,
                                                    "audio_seconds": 2})")),
      Contains("parallel.modules.audio.dp: 3 does not divide a slot's 2 samples") && Contains("deals them whole"));
}

}  // namespace
}  // namespace weft
