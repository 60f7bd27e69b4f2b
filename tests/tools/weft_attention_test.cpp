// `weft attention` on the bundled Cornstarch scenario, through the real binary.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "tests/support/cli_expectations.hpp"
#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using test::quoted;
using test::read_file;
using test::run_weft;
using test::TempDir;

const std::string kCornstarch = test::experiment("cornstarch-llama3-70b-cp8-64xa40");

TEST_CASE("weft attention times the token distributions of Cornstarch's masks", "[cli][attention]") {
  const TempDir dir;
  const auto run = run_weft("attention '" + kCornstarch + "' --tokens 16384 --mask causal,ee --masks 2 --json " +
                            quoted(dir.file("a.json")));
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Contains("llama3-70b's attention layer, 8 of 64 query heads and 1 of 8 key-value heads a rank "
                               "(tp 8), context parallel over 8 ranks, on a40 (bf16)") &&
                          Contains("lpt") && Contains("zigzag") && Contains("Forward and backward") &&
                          Contains("all-gather"));
  const auto json = nlohmann::json::parse(read_file(dir.file("a.json")));
  REQUIRE(json["rows"].size() == 2);
  const auto& causal = json["rows"][0];
  CHECK(causal["mask"] == "causal");
  // 128 row blocks of a causal mask: ring's last rank holds rows 113..128, 1928 tiles against a mean of 1032.
  CHECK(causal["distributions"]["ring"]["tile_imbalance"].get<double>() == Approx(1928.0 / 1032.0));
  CHECK(causal["distributions"]["zigzag"]["tile_imbalance"].get<double>() == Approx(1.0));
  CHECK(causal["distributions"]["ring"]["forward_s"].get<double>() >
        causal["distributions"]["zigzag"]["forward_s"].get<double>());
  CHECK(json["rows"][1]["mask"] == "ee");
  CHECK(json["rows"][1]["gather_s"].get<double>() > 0.0);
  SECTION("the same seed gives the same answer, another seed other masks") {
    const auto again = run_weft("attention '" + kCornstarch + "' --tokens 16384 --mask causal,ee --masks 2 --json " +
                                quoted(dir.file("b.json")));
    REQUIRE(again.exit_code == 0);
    CHECK(read_file(dir.file("b.json")) == read_file(dir.file("a.json")));
    const auto other = run_weft("attention '" + kCornstarch + "' --tokens 16384 --mask ee --masks 2 --seed 2 --json " +
                                quoted(dir.file("c.json")));
    REQUIRE(other.exit_code == 0);
    CHECK(nlohmann::json::parse(read_file(dir.file("c.json")))["rows"][0]["tile_density"] !=
          json["rows"][1]["tile_density"]);
  }
}

TEST_CASE("weft attention refuses bad input with exit 2 and leaves no file", "[cli][attention]") {
  const TempDir dir;
  const auto rejects = [&](const std::string& arguments, const std::string& message) {
    const auto run = run_weft("attention " + arguments + " --json " + quoted(dir.file("a.json")));
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.err, StartsWith("weft: error: ") && Contains(message));
    CHECK(run.out.empty());
    CHECK_FALSE(std::filesystem::exists(dir.file("a.json")));
  };
  rejects("'" + kCornstarch + "' --tokens 1024",
          "--tokens: '1024' is not a multiple of 128 tokens (the tile) from 2048");
  rejects("'" + kCornstarch + "' --tokens 16400", "--tokens: '16400' is not a multiple of 128");
  rejects("'" + kCornstarch + "' --tokens 16384,16384", "--tokens: '16384' is given twice");
  rejects("'" + kCornstarch + "' --tokens ''", "--tokens: '' is not");
  rejects("'" + kCornstarch + "' --distribution random,random", "--distribution: 'random' is given twice");
  rejects("'" + kCornstarch + "' --tokens 1048576 --tile 16", "the study would count");
  auto unfused = nlohmann::json::parse(read_file(kCornstarch));
  unfused["stack"] = "huggingface-eager";
  unfused["training"]["dtype"] = "tf32";
  rejects(quoted(dir.write("unfused.json", unfused.dump())), "runs unfused attention");
  rejects("'" + kCornstarch + "' --tokens 16384,x", "--tokens: 'x'");
  rejects("'" + kCornstarch + "' --mask ep,star", "--mask: 'star' is not one of causal, ep, ee, document or mp");
  rejects("'" + kCornstarch + "' --distribution lpt,best",
          "--distribution: 'best' is not one of lpt, random, ring or zigzag");
  rejects("'" + test::experiment("llama3-8b-4l-1xh100") + "'", "parallel.cp is 1");
  const auto zero = run_weft("attention '" + kCornstarch + "' --masks 0");
  CHECK(zero.exit_code == 2);
  CHECK_THAT(zero.err, Contains("--masks"));
}

}  // namespace
}  // namespace weft
