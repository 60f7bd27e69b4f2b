// `weft sweep` end to end, through the real binary.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <map>
#include <string>

#include "tests/support/chromium.hpp"
#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using test::read_file;
using test::run_weft;
using test::TempDir;

const std::string kSmall = R"({
    "model": {"base": "llama3-8b", "layers": 8, "hidden": 2048, "ffn_hidden": 7168, "heads": 16, "kv_heads": 8},
    "cluster": {"base": "dgx-h100", "gpus": 16},
    "training": {"global_batch": 32, "seq_len": 4096},
    "options": {"framework_overhead_GiB": 2}})";
const std::string kGrid = "--grid 'pp=1,2,4 mb=1,2 zero=0,1'";

TEST_CASE("weft sweep ranks plans and writes CSV, JSON, HTML and the best trace", "[cli][sweep]") {
  const TempDir dir;
  const auto scenario = dir.write("s.json", kSmall);
  const auto run = run_weft("sweep '" + scenario.string() + "' " + kGrid + " --top 5 --csv '" +
                            dir.file("p.csv").string() + "' --json '" + dir.file("p.json").string() + "' --html '" +
                            dir.file("p.html").string() + "' --trace-best '" + dir.file("best.json").string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Contains("Top 5 by throughput") && Contains("considered") && Contains("plans/s"));
  const auto json = nlohmann::json::parse(read_file(dir.file("p.json")));
  CHECK(json["feasible"].get<int>() > 0);
  CHECK(json["plans"].size() == json["considered"].get<std::size_t>());
  // The CSV's header and one row per plan considered.
  const std::string csv = read_file(dir.file("p.csv"));
  CHECK_THAT(csv,
             StartsWith("rank,tp,pp,dp,cp,vpp,micro_batch,sequence_parallel,recompute,zero,dp_shard,schedule,layout,"
                        "module_stages,partition,status,"));
  CHECK(static_cast<std::size_t>(std::count(csv.begin(), csv.end(), '\n')) == json["plans"].size() + 1);
  for (const char* column : {"iteration_time_s", "mfu", "tokens_per_s", "peak_memory_bytes"}) {
    CHECK_THAT(csv.substr(0, csv.find('\n')), Contains(column));
  }
  // The best plan is first, and the trace is of it.
  const auto best = json["plans"][0];
  CHECK(best["status"] == "ok");
  const auto trace = nlohmann::json::parse(read_file(dir.file("best.json")));
  CHECK(trace["otherData"]["makespan_ns"].get<double>() ==
        Approx(best["iteration_time_s"].get<double>() * 1e9).epsilon(1e-12));
}

TEST_CASE("the sweep's CSV is the same with 1 and 2 threads", "[cli][sweep]") {
  const TempDir dir;
  const auto scenario = dir.write("s.json", kSmall);
  REQUIRE(
      run_weft("sweep '" + scenario.string() + "' " + kGrid + " --threads 1 --csv '" + dir.file("1.csv").string() + "'")
          .exit_code == 0);
  REQUIRE(
      run_weft("sweep '" + scenario.string() + "' " + kGrid + " --threads 2 --csv '" + dir.file("2.csv").string() + "'")
          .exit_code == 0);
  CHECK(read_file(dir.file("1.csv")) == read_file(dir.file("2.csv")));
}

TEST_CASE("a sweep with --no-reuse ranks the same plans with the same numbers", "[cli][sweep]") {
  const TempDir dir;
  const auto scenario = dir.write("s.json", kSmall);
  const auto reused = run_weft("sweep '" + scenario.string() + "' " + kGrid + " --stats --csv '" +
                               dir.file("reuse.csv").string() + "'");
  const auto every_op = run_weft("sweep '" + scenario.string() + "' " + kGrid + " --no-reuse --stats --csv '" +
                                 dir.file("every-op.csv").string() + "'");
  REQUIRE(reused.exit_code == 0);
  REQUIRE(every_op.exit_code == 0);
  CHECK(read_file(dir.file("reuse.csv")) == read_file(dir.file("every-op.csv")));
  CHECK_THAT(reused.out, Contains("Subgraph reuse: ") && Contains(" hits, ") && !Contains(" 0 hits"));
  CHECK_THAT(every_op.out, Contains("Subgraph reuse: 0 hits, 0 misses") && Contains("--no-reuse"));
  // GPipe plans came from their 1F1B plans' checkpoints with reuse, and were built anew without.
  CHECK_THAT(reused.out, Contains("Checkpoint-restore: ") && !Contains("Checkpoint-restore: 0 "));
  CHECK_THAT(every_op.out, Contains("Checkpoint-restore: 0 GPipe plans"));
  // Where the time went, phase by phase (docs/PERFORMANCE.md).
  CHECK_THAT(reused.out, Contains("Time by phase: enumeration ") && Contains(" plans ") &&
                             Contains("per simulated plan ") && Contains("(graph ") && Contains(", engine ") &&
                             Contains(" of which template lookups ") && Contains(" and template simulations ") &&
                             Contains(", report "));
  CHECK_THAT(reused.out, Contains("Template time: ") && Contains(" finding the schedules of ") &&
                             Contains(" composites (one lookup in 64 timed), ") &&
                             Contains(" simulating the templates not cached"));
  CHECK_THAT(every_op.out, !Contains("Template time: "));
}

TEST_CASE("a sweep prunes the plans that cannot enter its top K, and --all simulates them", "[cli][sweep]") {
  const TempDir dir;
  const auto scenario = dir.write("s.json", kSmall);
  const std::string grid = " --grid 'tp=1,2 pp=1,2,4 cp=1,2 vpp=1,2 zero=1 mb=1,2' --top 3";
  const auto pruned =
      run_weft("sweep '" + scenario.string() + "'" + grid + " --csv '" + dir.file("p.csv").string() + "' --json '" +
               dir.file("p.json").string() + "' --html '" + dir.file("p.html").string() + "'");
  const auto all = run_weft("sweep '" + scenario.string() + "'" + grid + " --all --csv '" +
                            dir.file("all.csv").string() + "' --json '" + dir.file("all.json").string() + "'");
  INFO(pruned.err << all.err);
  REQUIRE(pruned.exit_code == 0);
  REQUIRE(all.exit_code == 0);
  CHECK_THAT(pruned.out, Contains(" pruned (slower by their compute alone than the top 3)"));
  CHECK_THAT(all.out, !Contains("pruned"));
  // The same top 3, with the same numbers.
  const auto top = [](const std::string& out) {
    return out.substr(out.find("Top 3"), out.find("\nSwept") - out.find("Top 3"));
  };
  CHECK(top(pruned.out) == top(all.out));
  const auto pruned_json = nlohmann::json::parse(read_file(dir.file("p.json")));
  const auto all_json = nlohmann::json::parse(read_file(dir.file("all.json")));
  CHECK(pruned_json["pruned"].get<int>() > 0);
  CHECK(pruned_json["pruned"].get<int>() + pruned_json["simulated"].get<int>() == all_json["simulated"].get<int>());
  CHECK(all_json["pruned"].get<int>() == 0);
  // Pruned plans are listed after those that fit or ran out of memory, with their memory estimate.
  const std::string csv = read_file(dir.file("p.csv"));
  CHECK_THAT(csv, Contains(",pruned,\"its compute alone takes at least "));
  CHECK(csv.find(",ok,") < csv.find(",pruned,"));
  CHECK_THAT(read_file(dir.file("p.html")), Contains("were not simulated") && Contains("--all simulates every plan"));
}

TEST_CASE("a sweep tries full recompute of some layers, between none and every layer", "[cli][sweep][recompute]") {
  const TempDir dir;
  const auto scenario = dir.write("s.json", kSmall);
  const auto run = run_weft("sweep '" + scenario.string() +
                            "' --grid 'tp=1 pp=2 cp=1 mb=1 zero=1 schedule=1f1b recompute=none,full/first2,full' --all "
                            "--json '" +
                            dir.file("p.json").string() + "' --csv '" + dir.file("p.csv").string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  std::map<std::string, nlohmann::json> by_recompute;
  const auto json = nlohmann::json::parse(read_file(dir.file("p.json")));
  for (const auto& plan : json["plans"]) {
    by_recompute[plan["recompute"].get<std::string>()] = plan;
  }
  REQUIRE(by_recompute.size() == 3);
  const auto& some = by_recompute.at("full/first2");
  CHECK_THAT(some["label"].get<std::string>(), Contains("recompute=full/first2"));
  CHECK_THAT(read_file(dir.file("p.csv")), Contains(",full/first2,"));
  // Two of each stage's four layers recomputed: slower than none, faster than all; less memory
  // than none, more than all.
  auto field = [](const nlohmann::json& plan, const char* name) { return plan[name].get<double>(); };
  CHECK(field(by_recompute.at("none"), "iteration_time_s") < field(some, "iteration_time_s"));
  CHECK(field(some, "iteration_time_s") < field(by_recompute.at("full"), "iteration_time_s"));
  CHECK(field(by_recompute.at("full"), "peak_memory_bytes") < field(some, "peak_memory_bytes"));
  CHECK(field(some, "peak_memory_bytes") < field(by_recompute.at("none"), "peak_memory_bytes"));
}

TEST_CASE("a sweep tries hybrid sharding's group sizes", "[cli][sweep][hybrid]") {
  const TempDir dir;
  // Llama 3 8B's first 4 layers under FSDP on two 8-GPU nodes.
  const auto scenario = dir.write("fsdp.json", R"({"model": {"base": "llama3-8b", "layers": 4},
      "cluster": {"base": "dgx-h100", "gpus": 16}, "stack": "pytorch-eager",
      "training": {"global_batch": 16, "seq_len": 8192}})");
  const auto run = run_weft("sweep '" + scenario.string() +
                            "' --grid 'tp=1 pp=1 cp=1 mb=1 zero=3 schedule=1f1b recompute=none dp_shard=all,8' --all "
                            "--json '" +
                            dir.file("p.json").string() + "' --csv '" + dir.file("p.csv").string() + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const auto json = nlohmann::json::parse(read_file(dir.file("p.json")));
  REQUIRE(json["plans"].size() == 2);
  std::map<int, nlohmann::json> by_shard;
  for (const auto& plan : json["plans"]) by_shard[plan["dp_shard"].get<int>()] = plan;
  REQUIRE(by_shard.count(16) == 1);
  REQUIRE(by_shard.count(8) == 1);
  CHECK_THAT(by_shard[8]["label"].get<std::string>(), Contains("zero3/shard8"));
  CHECK_THAT(read_file(dir.file("p.csv")), Contains(",3,8,1f1b,") && Contains(",3,16,1f1b,"));
  // Half the shards: more memory per GPU.
  CHECK(by_shard[8]["peak_memory_bytes"].get<double>() > by_shard[16]["peak_memory_bytes"].get<double>());
}

TEST_CASE("a sweep where nothing fits says so and exits 0", "[cli][sweep]") {
  const TempDir dir;
  const auto scenario = dir.write("big.json", R"({"model": "llama3-405b", "cluster": {"base": "dgx-h100", "gpus": 8},
                                                  "training": {"global_batch": 8, "seq_len": 8192}})");
  const auto run = run_weft("sweep '" + scenario.string() + "' --csv '" + dir.file("p.csv").string() + "'");
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.out, Contains("No plan fits") && Contains("out of memory"));
  CHECK(std::filesystem::exists(dir.file("p.csv")));
}

TEST_CASE("bad sweep input exits 2 with a clear message and no files", "[cli][sweep][errors]") {
  const TempDir dir;
  const auto scenario = dir.write("s.json", kSmall);
  auto rejected = [&](const std::string& flags, const std::string& message) {
    const auto run =
        run_weft("sweep '" + scenario.string() + "' " + flags + " --csv '" + dir.file("x.csv").string() + "'");
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.err, StartsWith("weft: error: ") && Contains(message));
    CHECK_FALSE(std::filesystem::exists(dir.file("x.csv")));
  };
  rejected("--grid 'tp=1,2 pq=4'", "--grid: unknown axis 'pq'");
  rejected("--grid 'tp=a'", "--grid: 'tp=a': expected non-negative integers");
  rejected("--grid 'schedule=fast'",
           "--grid: 'schedule=fast': expected gpipe, 1f1b, interleaved, zb-h1 or encoder-first");
  rejected(
      "--grid 'recompute=full/first0'",
      "--grid: 'recompute=full/first0': expected none, selective, full, full/firstN, full/everyK or full/uniformN");
  rejected("--grid 'dp_shard=half'", "--grid: 'dp_shard=half': expected all, node, or numbers of data-parallel ranks");
  rejected("--grid 'pp=1..1000 vpp=1..100000'", "--grid: its axes make");
  rejected("--top 0", "--top: expected an integer of at least 1, got '0'");
  rejected("--html /nonexistent/dir/r.html", "--html: cannot write");
}

TEST_CASE("the HTML report draws its charts in a real browser", "[cli][sweep][browser]") {
  const TempDir dir;
  const auto scenario = dir.write("s.json", kSmall);
  REQUIRE(run_weft("sweep '" + scenario.string() + "' " + kGrid + " --html '" + dir.file("r.html").string() + "'")
              .exit_code == 0);
  const std::string html = read_file(dir.file("r.html"));
  CHECK(html.find("<script") == std::string::npos);               // self-contained, no scripts
  CHECK(html.find("http://") == html.find("http://www.w3.org"));  // no network but the SVG namespace
  const std::string measured = test::measure_in_chromium(html, R"(
      const out = {};
      for (const svg of document.querySelectorAll('svg')) {
        const box = svg.getBoundingClientRect();
        out[svg.id] = {width: box.width, height: box.height,
                       cells: svg.querySelectorAll('rect.cell').length,
                       bars: svg.querySelectorAll('rect.memory-bar').length,
                       parts: svg.querySelectorAll('rect.time-part').length};
      }
      out.rows = document.querySelectorAll('tbody tr').length;
      document.body.setAttribute('data-result', JSON.stringify(out));)");
  const auto result = nlohmann::json::parse(measured);
  for (const char* chart : {"mfu-heatmap", "memory-per-stage", "time-breakdown"}) {
    INFO(chart);
    REQUIRE(result.contains(chart));
    CHECK(result[chart]["width"].get<double>() > 100);
    CHECK(result[chart]["height"].get<double>() > 50);
  }
  CHECK(result["mfu-heatmap"]["cells"].get<int>() == 4 * 3);  // TP 1, 2, 4, 8 x PP 1, 2, 4
  CHECK(result["memory-per-stage"]["bars"].get<int>() > 0);
  CHECK(result["time-breakdown"]["parts"].get<int>() >= 5);
  CHECK(result["rows"].get<int>() == 10);
}

}  // namespace
}  // namespace weft
