// `weft simulate` on training scenarios, through the real binary.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <utility>

#include "tests/support/cli_expectations.hpp"
#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using test::experiment;
using test::read_file;
using test::run_weft;
using test::TempDir;

TEST_CASE("the bundled experiments simulate with a plausible MFU", "[cli][experiments]") {
  for (const char* name : {"gpt3-175b-1024xa100", "llama3-70b-512xh100", "llama3-405b-16384xh100"}) {
    INFO(name);
    const TempDir dir;
    const auto run = run_weft("simulate '" + experiment(name) + "' --json '" + dir.file("out.json").string() + "'");
    REQUIRE(run.exit_code == 0);
    const auto result = nlohmann::json::parse(read_file(dir.file("out.json")));
    CHECK(result["mfu"].get<double>() > 0.20);
    CHECK(result["mfu"].get<double>() < 0.65);
    CHECK(result["oom"] == false);
  }
}

TEST_CASE("the JSON output has the documented fields, consistent with each other", "[cli]") {
  const TempDir dir;
  const auto run = run_weft("simulate '" + experiment("llama3-70b-512xh100") + "' --json '" +
                            dir.file("out.json").string() + "' --trace '" + dir.file("trace.json").string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Contains("Iteration time") && Contains("MFU") && Contains("Megatron-LM convention") &&
                          Contains("tp comm") && Contains("bubble"));
  const auto result = nlohmann::json::parse(read_file(dir.file("out.json")));
  for (const char* key : {"iteration_time_s", "tokens_per_s", "samples_per_s", "mfu", "tflops_per_gpu",
                          "model_flops_per_iteration", "oom", "stages"}) {
    CHECK(result.contains(key));
  }
  const double time = result["iteration_time_s"];
  // 512 samples of 8192 tokens per iteration.
  CHECK(result["tokens_per_s"].get<double>() == Approx(512.0 * 8192 / time));
  CHECK(result["samples_per_s"].get<double>() == Approx(512.0 / time));
  // TFLOP/s per GPU = model FLOPs / time / 512 GPUs; MFU = that / 989.4 TFLOP/s (H100 bf16).
  const double per_gpu = result["model_flops_per_iteration"].get<double>() / time / 512 / 1e12;
  CHECK(result["tflops_per_gpu"].get<double>() == Approx(per_gpu));
  CHECK(result["mfu"].get<double>() == Approx(per_gpu / 989.4));
  REQUIRE(result["stages"].size() == 4);
  for (const auto& stage : result["stages"]) {
    double sum = stage["compute_s"].get<double>() + stage["bubble_s"].get<double>();
    for (const auto& [group, seconds] : stage["exposed_comm_s"].items()) sum += seconds.get<double>();
    CHECK(sum == Approx(time).epsilon(1e-9));
    CHECK(stage["peak_memory_bytes"].get<double>() > 0);
  }
  // One process per simulated rank, labelled by its coordinates; spans name the pass (chunk,
  // microbatch, phase), the layer and the op.
  const auto trace = nlohmann::json::parse(read_file(dir.file("trace.json")));
  bool labelled = false, named = false;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] == "M" && event["name"] == "process_name" &&
        event["args"]["name"].get<std::string>().rfind("stage 2 / tp 0 / dp 0", 0) == 0) {
      labelled = true;
    }
    if (event["ph"] == "X" && event["name"] == "chunk 0 mb0 fwd/L3/attn_norm fwd") named = true;
  }
  CHECK(labelled);
  CHECK(named);
}

TEST_CASE("per-sample data simulates every DP replica and reports the batch it drew", "[cli][data]") {
  const TempDir dir;
  const auto scenario = dir.write("data.json", R"({
      "model": {"base": "llama3-8b", "layers": 4},
      "cluster": {"base": "dgx-h100", "gpus": 16},
      "parallel": {"tp": 2, "pp": 2, "dp": 4},
      "training": {"global_batch": 32, "seq_len": 4096},
      "data": {"dataset": "web-text-mix", "seed": 3, "pad_to": 256}})");
  const auto json_file = dir.file("out.json");
  const auto run = run_weft("simulate '" + scenario.string() + "' --json '" + json_file.string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Contains("Data     web-text-mix: ") && Contains("8 simulated ranks (one per pipeline stage of "
                                                                      "each DP replica)"));
  const auto result = nlohmann::json::parse(read_file(json_file));
  CHECK(result["per_replica"] == true);
  const auto& data = result["data"];
  CHECK(data["dataset"] == "web-text-mix");
  CHECK(data["sample_tokens"].get<long long>() <= data["padded_tokens"].get<long long>());
  CHECK(data["longest_microbatch_tokens"].get<long long>() <= 4096);
  CHECK(data["shortest_microbatch_tokens"].get<long long>() % 256 == 0);
  // The same seed draws the same batch and gives the same iteration.
  const auto again = run_weft("simulate '" + scenario.string() + "'");
  auto from_data_to_throughput = [](const std::string& out) {
    const std::size_t from = out.find("Data");
    return out.substr(from, out.find("Throughput") - from);
  };
  CHECK(from_data_to_throughput(again.out) == from_data_to_throughput(run.out));

  // Samples from a file: 32 samples, 100 + 200 + ... + 3200 tokens, padded to 256 each: the
  // totals are known without weft.
  std::string samples;
  long long sample_tokens = 0;
  long long padded_tokens = 0;
  for (int i = 1; i <= 32; ++i) {
    samples += "{\"text_tokens\": " + std::to_string(100 * i) + "}\n";
    sample_tokens += 100 * i;
    padded_tokens += (100 * i + 255) / 256 * 256;
  }
  const auto from_file = dir.write("from-file.json", R"({
      "model": {"base": "llama3-8b", "layers": 4},
      "cluster": {"base": "dgx-h100", "gpus": 16},
      "parallel": {"tp": 2, "pp": 2, "dp": 4},
      "training": {"global_batch": 32, "seq_len": 4096},
      "data": {"samples": ")" + dir.write("samples.jsonl", samples).string() +
                                                         R"(", "pad_to": 256}})");
  const auto file_run = run_weft("simulate '" + from_file.string() + "' --json '" + json_file.string() + "'");
  REQUIRE(file_run.exit_code == 0);
  const auto file_result = nlohmann::json::parse(read_file(json_file));
  CHECK(file_result["data"]["sample_tokens"].get<long long>() == sample_tokens);
  CHECK(file_result["data"]["padded_tokens"].get<long long>() == padded_tokens);
  CHECK(file_result["data"]["shortest_microbatch_tokens"].get<long long>() == 256);
  CHECK(file_result["data"]["longest_microbatch_tokens"].get<long long>() == 3328);
  CHECK(file_result["tokens_per_s"].get<double>() ==
        Approx(static_cast<double>(sample_tokens) / file_result["iteration_time_s"].get<double>()));

  const auto refused = run_weft("simulate '" + scenario.string() + "' --unfold");
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.err, Contains("--unfold"));
}

TEST_CASE("the unfold flag simulates every rank and gives the same answer", "[cli]") {
  const TempDir dir;
  const auto scenario = dir.write("small.json", R"({
      "model": {"base": "llama3-8b", "layers": 4},
      "cluster": {"base": "dgx-h100", "gpus": 16},
      "parallel": {"tp": 2, "pp": 2, "dp": 4, "sequence_parallel": true, "zero": 1},
      "training": {"global_batch": 16, "seq_len": 2048}})");
  const auto folded = run_weft("simulate '" + scenario.string() + "' --json '" + dir.file("a.json").string() + "'");
  const auto unfolded =
      run_weft("simulate '" + scenario.string() + "' --unfold --json '" + dir.file("b.json").string() + "'");
  REQUIRE(folded.exit_code == 0);
  REQUIRE(unfolded.exit_code == 0);
  CHECK_THAT(unfolded.out, Contains("16 simulated ranks (unfolded: every rank)"));
  const auto a = nlohmann::json::parse(read_file(dir.file("a.json")));
  const auto b = nlohmann::json::parse(read_file(dir.file("b.json")));
  CHECK(a["iteration_time_s"] == b["iteration_time_s"]);
  CHECK(a["folded"] == true);
  CHECK(b["folded"] == false);
}

TEST_CASE("selective recompute under fused attention is simulated with a warning that it keeps everything",
          "[cli][recompute]") {
  const TempDir dir;
  auto scenario_with = [&](const std::string& name, const std::string& recompute) {
    return dir.write(name, R"({
      "model": {"base": "llama3-8b", "layers": 4},
      "cluster": {"base": "dgx-h100", "gpus": 8},
      "stack": "megatron-core",
      "parallel": {"tp": 1, "pp": 1, "dp": 8, "zero": 1, "recompute": ")" +
                               recompute + R"("},
      "training": {"global_batch": 16, "seq_len": 2048}})");
  };
  const auto selective = run_weft("simulate '" + scenario_with("selective.json", "selective").string() + "'");
  const auto none = run_weft("simulate '" + scenario_with("none.json", "none").string() + "'");
  REQUIRE(selective.exit_code == 0);
  REQUIRE(none.exit_code == 0);
  CHECK_THAT(selective.err, Contains("weft: warning: parallel.recompute: 'selective'") &&
                                Contains("keeps every activation, as 'none' does"));
  CHECK(none.err.find("warning") == std::string::npos);
}

TEST_CASE("under PyTorch's stack selective recompute is per-op checkpointing: between none and full",
          "[cli][recompute]") {
  const TempDir dir;
  auto simulate = [&](const std::string& recompute) {
    const auto scenario = dir.write(recompute + ".json", R"({
      "model": {"base": "llama3-8b", "layers": 4}, "cluster": {"base": "dgx-h100", "gpus": 8},
      "stack": "pytorch-eager", "parallel": {"dp": 8, "zero": 3, "recompute": ")" +
                                                             recompute + R"("},
      "training": {"global_batch": 16, "micro_batch": 2, "seq_len": 8192}})");
    const auto run =
        run_weft("simulate '" + scenario.string() + "' --json '" + dir.file(recompute + ".out").string() + "'");
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    CHECK(run.err.find("warning") == std::string::npos);
    const auto stage = nlohmann::json::parse(read_file(dir.file(recompute + ".out")))["stages"][0];
    return std::pair{stage["memory_breakdown_bytes"]["activations_and_buffers"].get<double>(),
                     stage["compute_s"].get<double>()};
  };
  const auto [none_memory, none_compute] = simulate("none");
  const auto [per_op_memory, per_op_compute] = simulate("selective");
  const auto [full_memory, full_compute] = simulate("full");
  CHECK(full_memory < per_op_memory);
  CHECK(per_op_memory < none_memory);
  CHECK(none_compute < per_op_compute);
  CHECK(per_op_compute < full_compute);
}

// `scenario` simulated with reuse and --stats (JSON report in a.json) and with --no-reuse (b.json).
std::pair<test::CommandResult, test::CommandResult> simulate_with_and_without_reuse(const TempDir& dir,
                                                                                    const std::string& scenario) {
  auto reused = run_weft("simulate '" + scenario + "' --stats --json '" + dir.file("a.json").string() + "'");
  auto every_op = run_weft("simulate '" + scenario + "' --no-reuse --json '" + dir.file("b.json").string() + "'");
  REQUIRE(reused.exit_code == 0);
  REQUIRE(every_op.exit_code == 0);
  return {std::move(reused), std::move(every_op)};
}

TEST_CASE("the no-reuse flag simulates every op and gives the same answer", "[cli]") {
  const TempDir dir;
  const auto scenario = dir.write("small.json", R"({
      "model": {"base": "llama3-8b", "layers": 4},
      "cluster": {"base": "dgx-h100", "gpus": 16},
      "parallel": {"tp": 2, "pp": 2, "dp": 4, "schedule": "zb-h1", "recompute": "full", "zero": 1},
      "training": {"global_batch": 32, "seq_len": 2048}})");
  const auto [reused, every_op] = simulate_with_and_without_reuse(dir, scenario.string());
  CHECK_THAT(reused.out, Contains("Subgraph reuse: ") && Contains("0 simulations fell back"));
  CHECK_THAT(reused.out, Contains("Template time: ") && Contains(" simulating the templates not cached"));
  CHECK_THAT(every_op.out, !Contains("Subgraph reuse"));
  CHECK(nlohmann::json::parse(read_file(dir.file("a.json"))) == nlohmann::json::parse(read_file(dir.file("b.json"))));
}

TEST_CASE("weft simulate names ops only for a trace, with the same results", "[cli]") {
  // Without --trace or --emit-plan the ops go unnamed (as a sweep builds them): nothing else reads
  // their names.
  for (const char* name : {"gpt3-175b-1024xa100", "vlm-s-16xh800"}) {
    INFO(name);
    const TempDir dir;
    const auto plain = run_weft("simulate '" + experiment(name) + "' --json '" + dir.file("a.json").string() + "'");
    const auto traced = run_weft("simulate '" + experiment(name) + "' --json '" + dir.file("b.json").string() +
                                 "' --trace '" + dir.file("trace.json").string() + "'");
    REQUIRE(plain.exit_code == 0);
    REQUIRE(traced.exit_code == 0);
    CHECK(read_file(dir.file("a.json")) == read_file(dir.file("b.json")));
    // The trace names the passes.
    CHECK_THAT(read_file(dir.file("trace.json")), Contains(" mb0 "));
  }
}

TEST_CASE("identical layers share templates and give the every-op answer", "[cli][reuse]") {
  // One stage of 4 identical layers, 1F1B, no recompute: one forward and two backward pass
  // templates (the last microbatch's runs beside the gradient reduction, its compute slowed),
  // each holding 4 composites of one layer template.
  const TempDir dir;
  const auto scenario = dir.write("layers.json", R"({
      "model": {"base": "llama3-8b", "layers": 4},
      "cluster": {"base": "dgx-h100", "gpus": 8},
      "parallel": {"tp": 2, "dp": 4, "sequence_parallel": true},
      "training": {"global_batch": 8, "seq_len": 2048}})");
  const auto [reused, every_op] = simulate_with_and_without_reuse(dir, scenario.string());
  CHECK_THAT(reused.out, Contains("Templates: 3 passes, 3 layers nested in them"));
  CHECK_THAT(every_op.out, !Contains("Templates:"));
  CHECK(nlohmann::json::parse(read_file(dir.file("a.json"))) == nlohmann::json::parse(read_file(dir.file("b.json"))));
}

TEST_CASE("full recompute of some layers is named in the report and simulated alike with and without reuse",
          "[cli][recompute]") {
  const TempDir dir;
  // pp 2 with 2 chunks a rank of 2 layers each: every 2nd layer of a rank is the second of each
  // chunk, so that chunks of one shape recompute different layers than the first-layer pick.
  auto scenario_with = [&](const std::string& name, const std::string& layers) {
    return dir
        .write(name, R"({
      "model": {"base": "llama3-8b", "layers": 8, "hidden": 2048, "ffn_hidden": 7168, "heads": 16, "kv_heads": 8},
      "cluster": {"base": "dgx-h100", "gpus": 8},
      "parallel": {"tp": 2, "pp": 2, "dp": 2, "vpp": 2, "schedule": "interleaved", "zero": 1, "recompute": "full",
                   "recompute_layers": )" +
                         layers + R"(},
      "training": {"global_batch": 8, "seq_len": 2048}})")
        .string();
  };
  for (const auto& [layers, named] :
       {std::pair{std::string(R"({"every": 2})"), "every 2nd layer of each rank"},
        std::pair{std::string(R"({"first": 1})"), "the first layer of each chunk"},
        std::pair{std::string(R"({"uniform": 2})"), "every layer, in groups of 2 of each chunk"}}) {
    INFO(layers);
    const auto [reused, every_op] = simulate_with_and_without_reuse(dir, scenario_with("s.json", layers));
    CHECK_THAT(reused.out, Contains(std::string("recompute full (") + named + ")"));
    const auto a = nlohmann::json::parse(read_file(dir.file("a.json")));
    CHECK(a == nlohmann::json::parse(read_file(dir.file("b.json"))));
    CHECK(a["parallel"]["recompute_layers"] == nlohmann::json::parse(layers));
  }
  const auto bad = run_weft("simulate '" + scenario_with("bad.json", R"({"every": -2})") + "'");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Contains("parallel.recompute_layers.every"));
}

TEST_CASE("each GPU holds its stack's CUDA context unless the scenario gives its framework overhead", "[cli][stack]") {
  const TempDir dir;
  auto scenario = nlohmann::json::parse(read_file(experiment("llama3-70b-512xh100")));
  scenario["options"].erase("framework_overhead_GiB");
  auto overheads = [&](const std::string& stack) {
    scenario["stack"] = stack;
    const auto file = dir.write(stack + ".json", scenario.dump());
    const auto run = run_weft("simulate '" + file.string() + "' --json '" + dir.file(stack + ".out").string() + "'");
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    const auto result = nlohmann::json::parse(read_file(dir.file(stack + ".out")));
    std::set<std::int64_t> found;
    for (const auto& stage : result["stages"]) {
      found.insert(stage["memory_breakdown_bytes"]["framework_overhead"].get<std::int64_t>());
    }
    return found;
  };
  // Lazy module loading (pytorch/pytorch#86509): 287,047,680 bytes; BigScience's 2022 A100s: 1,573 MiB.
  CHECK(overheads("megatron-core") == std::set<std::int64_t>{287047680});
  CHECK(overheads("megatron-lm-2021") == std::set<std::int64_t>{std::int64_t{1573} << 20});
}

TEST_CASE("a stack's framework time per layer pass lengthens the iteration by hand's count", "[cli][stack]") {
  // GPT-3 1.3B on one H100: 24 layers, 4 microbatches, a forward and a backward pass each, with the
  // host's issue and the kernel gap off so that the compute stream's ops run back to back.
  const TempDir dir;
  auto scenario = nlohmann::json::parse(read_file(experiment("gpt3-1.3b-1xh100")));
  scenario["options"] = {{"host_issue", false}, {"kernel_gap", false}};
  const double by_hand = 24 * 4 * 2 * 100e-6;
  auto simulate = [&](double framework_us) {
    scenario["stack"]["layer_framework_us"] = framework_us;
    const auto file = dir.write("s.json", scenario.dump());
    const auto run = run_weft("simulate '" + file.string() + "' --json '" + dir.file("out.json").string() + "'");
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    CHECK((run.out.find("Framework        100.000 us a layer pass") != std::string::npos) == (framework_us > 0));
    return nlohmann::json::parse(read_file(dir.file("out.json")));
  };
  const auto without = simulate(0);
  const auto with = simulate(100);
  CHECK(with["iteration_time_s"].get<double>() - without["iteration_time_s"].get<double>() ==
        Approx(by_hand).epsilon(1e-6));
  CHECK(with["stages"][0]["framework_s"].get<double>() == Approx(by_hand).epsilon(1e-9));
  CHECK(without["stages"][0]["framework_s"].get<double>() == 0.0);
  scenario["stack"]["layer_framework_us"] = -1;
  test::expect_simulate_rejects(scenario.dump(), "stack.layer_framework_us: expected a number >= 0");
}

TEST_CASE("compute beside the data-parallel collectives is slowed unless the option turns it off",
          "[cli][contention]") {
  // Meta's 405B layout: ZeRO-2 overlaps its gradient reduction with the last microbatch's backward.
  const TempDir dir;
  auto scenario = nlohmann::json::parse(read_file(experiment("llama3-405b-16384xh100")));
  scenario["options"]["collective_contention"] = false;
  const auto off_file = dir.write("off.json", scenario.dump());
  auto iteration = [&](const std::string& file, const char* out) {
    const auto run = run_weft("simulate '" + file + "' --json '" + dir.file(out).string() + "'");
    REQUIRE(run.exit_code == 0);
    return nlohmann::json::parse(read_file(dir.file(out)))["iteration_time_s"].get<double>();
  };
  const double on = iteration(experiment("llama3-405b-16384xh100"), "on.json");
  const double off = iteration(off_file.string(), "off-result.json");
  CHECK(on > off);
  // Its DP groups span nodes: no compute op runs slower than on the 116 of 132 SMs NCCL's 16 leave.
  CHECK(on < off * 132.0 / 116.0);

  scenario["options"]["collective_contention"] = "no";
  test::expect_simulate_rejects(scenario.dump(), "options.collective_contention: expected true or false, got a string");
}

TEST_CASE("bad training scenarios exit 2 with the JSON path and the reason", "[cli][errors]") {
  const std::string base = R"("model": "llama3-8b", "cluster": {"base": "dgx-h100", "gpus": 8},
                              "training": {"global_batch": 8, "seq_len": 4096})";
  test::expect_simulate_rejects("{" + base + R"(, "parallel": {"tp": 3, "dp": 1}})",
                                "parallel.tp: 3 does not divide attention heads 32");
  test::expect_simulate_rejects("{" + base + R"(, "parallel": {"tp": 8, "dp": 2}})",
                                "parallel: dp x tp x pp x cp = 2 x 8 x 1 x 1 = 16 does not equal the cluster's 8 GPUs");
  test::expect_simulate_rejects("{" + base + R"(, "parallel": {"tp": 8, "dp": 1, "schedul": "1f1b"}})",
                                "parallel.schedul: unknown field");
  test::expect_simulate_rejects("{" + base + R"(, "parallel": {"tp": "eight"}})",
                                "parallel.tp: expected an integer, got a string");
  test::expect_simulate_rejects(
      R"({"model": "llama3-8b", "cluster": "dgx-h100", "training": {"global_batch": 8, "seq_len": 8}})",
      "missing required field 'parallel'");
  test::expect_simulate_rejects(R"({"modle": "llama3-8b"})",
                                "expected a training scenario (model, cluster, parallel, training)");
  test::expect_simulate_rejects(R"({"devices": [{"name": "g", "spec": "h100-sxm"}], "ops": []})",
                                "--unfold: applies to training", "--unfold");
  const std::string plan = R"(, "parallel": {"tp": 8, "dp": 1}})";
  test::expect_simulate_rejects("{" + base + R"(, "options": {"host_issue": "yes"})" + plan,
                                "options.host_issue: expected true or false, got a string");
  test::expect_simulate_rejects("{" + base + R"(, "options": {"kernel_gap": 1})" + plan,
                                "options.kernel_gap: expected true or false");
  test::expect_simulate_rejects("{" + base + R"(, "stack": "megatron-9")" + plan,
                                "stack: unknown software stack 'megatron-9'");
  test::expect_simulate_rejects("{" + base + R"(, "stack": {"base": "pytorch-eager", "swiglu": "half"})" + plan,
                                "stack.swiglu: expected \"fused\" or \"unfused\"");
  test::expect_simulate_rejects(
      "{" + base + R"(, "stack": {"base": "pytorch-eager", "cuda_context_MiB": "big"})" + plan,
      "stack.cuda_context_MiB: expected a number");
  test::expect_simulate_rejects(
      "{" + base + R"(, "stack": {"base": "pytorch-eager", "selective_recompute": "some"})" + plan,
      "stack.selective_recompute: ");
  test::expect_simulate_rejects(
      R"({"model": "llama3-8b", "cluster": {"base": "dgx-h100", "gpus": 8, "calibration": "a100-sxm-80gb"},
          "training": {"global_batch": 8, "seq_len": 4096})" +
          plan,
      "cluster.calibration: profile 'a100-sxm-80gb' was measured on 'a100-sxm-80gb'");
  // A token model needs its vocabulary; a patch model has none.
  const std::string rest = R"(, "cluster": {"base": "dgx-h100", "gpus": 8},
                              "training": {"global_batch": 8, "seq_len": 512})" +
                           plan;
  test::expect_simulate_rejects(R"({"model": {"base": "bert-large", "vocab": null})" + rest,
                                "model.vocab: expected an integer");
  test::expect_simulate_rejects(R"({"model": {"base": "vit-5b", "vocab": 1000})" + rest,
                                "model.vocab: only token models (decoder, masked-lm) have a vocabulary");
  test::expect_simulate_rejects(R"({"model": {"base": "bert-large", "kind": "bert"})" + rest, "model.kind:");
  // Heads that do not divide the hidden size need their width; a projector merges only what divides.
  test::expect_simulate_rejects(R"({"model": {"base": "llama3-8b", "heads": 30, "kv_heads": 10})" + rest,
                                "model.heads: 30 heads do not divide hidden 4096 (give 'head_dim'");
  test::expect_simulate_rejects(R"({"model": {"base": "llama3-8b", "head_dim": 0})" + rest,
                                "model.head_dim: expected an integer > 0, got 0");
  test::expect_simulate_rejects(
      R"({"model": {"name": "vlm", "modules": [
            {"name": "vision", "model": "internvit-6b-32heads", "tokens": "images", "tokens_per_image": 1025},
            {"name": "projector", "projector": {"token_merge": 4}},
            {"name": "language", "model": "qwen2-72b"}]})" +
          rest,
      "model.modules[1].projector.token_merge: expected a divisor of 'vision' tokens_per_image 1025, got 4");
}

TEST_CASE("a scenario's attention mask and token distribution set its context-parallel attention",
          "[cli][context_parallel]") {
  const TempDir dir;
  auto scenario = nlohmann::json::parse(read_file(experiment("llama3-70b-512xh100")));
  scenario["parallel"]["cp"] = 2;
  scenario["parallel"]["dp"] = scenario["parallel"]["dp"].get<int>() / 2;
  auto iteration = [&](const std::string& name) {
    const auto file = dir.write(name + ".json", scenario.dump());
    const auto run =
        run_weft("simulate '" + file.string() + "' --json '" + dir.file(name + ".out.json").string() + "'");
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    return nlohmann::json::parse(read_file(dir.file(name + ".out.json")))["iteration_time_s"].get<double>();
  };
  const double even = iteration("even");
  scenario["parallel"]["cp_distribution"] = "ring";
  const double ring = iteration("ring");
  scenario["parallel"]["cp_distribution"] = "zigzag";
  const double zigzag = iteration("zigzag");
  CHECK(ring > zigzag);
  CHECK(zigzag >= even);  // whole tiles on the diagonal: a little more than half
  CHECK(zigzag < even * 1.01);
  scenario["training"]["attention_mask"] = "mp";  // four packed sequences: far fewer tiles than causal text
  CHECK(iteration("packed") < zigzag);
  const auto packed = run_weft("simulate '" + dir.file("packed.json").string() + "'");
  CHECK_THAT(packed.out, Contains("cp ring, attention mask mp, tokens dealt zigzag"));
  scenario["training"]["attention_mask"] = "packed";
  test::expect_simulate_rejects(scenario.dump(), "training.attention_mask: 'packed' is not one of");
}

TEST_CASE("the bundled GPU's profile costs a scenario by default, --calibration none turns it off", "[cli]") {
  const TempDir dir;
  const auto calibrated =
      run_weft("simulate '" + experiment("llama3-70b-512xh100") + "' --json '" + dir.file("a.json").string() + "'");
  const auto roofline = run_weft("simulate '" + experiment("llama3-70b-512xh100") + "' --calibration none --json '" +
                                 dir.file("b.json").string() + "'");
  REQUIRE(calibrated.exit_code == 0);
  REQUIRE(roofline.exit_code == 0);
  const double profiled = nlohmann::json::parse(read_file(dir.file("a.json")))["iteration_time_s"];
  const double datasheet = nlohmann::json::parse(read_file(dir.file("b.json")))["iteration_time_s"];
  // The measured kernels run slower than the datasheet peak times the cluster's efficiencies.
  CHECK(profiled > datasheet * 1.05);
  const auto missing = run_weft("simulate '" + experiment("llama3-70b-512xh100") + "' --calibration no-such.json");
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.err, Contains("--calibration"));
}

TEST_CASE("weft simulate trains in tf32 on A40s and refuses a stack whose attention takes 16-bit inputs only",
          "[cli][dtype]") {
  const TempDir dir;
  const std::string scenario = experiment("gpt3-2.7b-30xa40-oobleck");
  const auto run = run_weft("simulate '" + scenario + "' --json '" + dir.file("out.json").string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Contains("of 74.8 TFLOP/s tf32 dense peak"));
  const auto result = nlohmann::json::parse(read_file(dir.file("out.json")));
  CHECK(result["oom"] == false);
  // The same run on Megatron-Core, whose attention on an A40 (sm86) is FlashAttention-2.
  std::string text = read_file(scenario);
  const std::string stack = "\"huggingface-eager\"";
  text.replace(text.find(stack), stack.size(), "\"megatron-core\"");
  const auto refused = run_weft("simulate '" + dir.write("fused.json", text).string() + "'");
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.err, Contains("training.dtype: stack 'megatron-core' runs flash2 attention on a40, which takes "
                                   "fp16 or bf16 only"));
}

TEST_CASE("weft simulate runs Bamboo's redundant computation and will not emit a plan of it", "[cli][bamboo]") {
  const TempDir dir;
  const std::string scenario = experiment("gpt3-2.7b-30xa40-bamboo");
  const auto run = run_weft("simulate '" + scenario + "' --json '" + dir.file("out.json").string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Contains("recompute none, redundant computation (Bamboo)"));
  const auto result = nlohmann::json::parse(read_file(dir.file("out.json")));
  CHECK(result["parallel"]["redundant_computation"] == true);
  const auto refused = run_weft("simulate '" + scenario + "' --emit-plan '" + dir.file("plan.json").string() + "'");
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.err, Contains("--emit-plan: execution plans do not run Bamboo's redundant computation"));
  CHECK_FALSE(std::filesystem::exists(dir.file("plan.json")));
}

// Llama 3 8B's first 4 layers under FSDP on two 8-GPU nodes, with `parallel` merged in.
std::string fsdp_on_two_nodes(const std::string& parallel) {
  return R"({"model": {"base": "llama3-8b", "layers": 4}, "cluster": {"base": "dgx-h100", "gpus": 16},
    "stack": "pytorch-eager", "parallel": {"dp": 16, "zero": 3)" +
         parallel + R"(}, "training": {"global_batch": 16, "micro_batch": 1, "seq_len": 8192}})";
}

TEST_CASE("simulate shards inside each node and replicates across them with parallel.dp_shard", "[cli][hybrid]") {
  const TempDir dir;
  auto simulate = [&](const std::string& name, const std::string& parallel) {
    const auto scenario = dir.write(name + ".json", fsdp_on_two_nodes(parallel));
    const auto run = run_weft("simulate '" + scenario.string() + "' --json '" + dir.file(name + ".out").string() + "'");
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    return std::pair{run.out, nlohmann::json::parse(read_file(dir.file(name + ".out")))};
  };
  const auto [full_text, full] = simulate("full", "");
  const auto [hybrid_text, hybrid] = simulate("hybrid", R"(, "dp_shard": 8)");
  CHECK_THAT(hybrid_text, Contains("ZeRO-3 hybrid (sharded over 8 DP ranks, 2 replicas)"));
  CHECK_THAT(full_text, !Contains("hybrid"));
  CHECK(hybrid["parallel"]["dp_shard"] == 8);
  CHECK(full["parallel"]["dp_shard"] == 16);
  // Parameters, gradients and optimizer states over 8 ranks instead of 16.
  for (const char* part : {"parameters", "gradients", "optimizer_states"}) {
    INFO(part);
    const double whole = full["stages"][0]["memory_breakdown_bytes"][part].get<double>();
    CHECK(hybrid["stages"][0]["memory_breakdown_bytes"][part].get<double>() == Approx(2 * whole).epsilon(1e-6));
  }
}

TEST_CASE("simulate rejects a dp_shard the plan cannot hold", "[cli][hybrid][errors]") {
  test::expect_simulate_rejects(fsdp_on_two_nodes(R"(, "dp_shard": 5)"), "parallel.dp_shard: shard groups of 5");
  test::expect_simulate_rejects(fsdp_on_two_nodes(R"(, "dp_shard": "rack")"),
                                "parallel.dp_shard: expected a number of data-parallel ranks or \"node\"");
  test::expect_simulate_rejects(fsdp_on_two_nodes(R"(, "dp_shard": 8)"), "execution plans do not cover hybrid sharding",
                                "--emit-plan plan.json");
  test::expect_simulate_rejects(fsdp_on_two_nodes(R"(, "dp_shard": 8)"), "--unfold: hybrid sharding", "--unfold");
}

}  // namespace
}  // namespace weft
