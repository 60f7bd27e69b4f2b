#include "simulator/core/json_cursor.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "simulator/core/dtype.hpp"

namespace weft {
namespace {

using Catch::Matchers::Equals;

TEST_CASE("values are read with their paths", "[json]") {
  const auto document = JsonDocument::parse_text(R"({"ops": [{"flops": 1e9, "name": "a", "on": true}]})", "x.json");
  const JsonCursor op = document.root().at("ops").elements().at(0);
  CHECK(op.path() == "ops[0]");
  CHECK(op.at("flops").as_int() == 1'000'000'000);
  CHECK(op.at("flops").path() == "ops[0].flops");
  CHECK(op.at("name").as_string() == "a");
  CHECK(op.at("on").as_bool());
  CHECK_FALSE(op.find("missing").has_value());
}

TEST_CASE("type and value errors name the path and the expectation", "[json][errors]") {
  const auto document = JsonDocument::parse_text(
      R"({"a": "text", "b": 1.5, "c": -2, "d": {"x": 1, "y": 2}, "e": "fp7", "f": 1e30})", "x.json");
  const JsonCursor root = document.root();
  CHECK_THROWS_WITH(root.at("a").as_number(), Equals("a: expected a number, got a string"));
  CHECK_THROWS_WITH(root.at("b").as_int(), Equals("b: expected an integer, got 1.5"));
  CHECK_THROWS_WITH(root.at("c").as_nonnegative_int(), Equals("c: expected an integer >= 0, got -2"));
  CHECK_THROWS_WITH(root.at("c").as_positive_number(), Equals("c: expected a number > 0, got -2"));
  CHECK_THROWS_WITH(root.at("zz"), Equals("(top level): missing required field 'zz'"));
  CHECK_THROWS_WITH(root.at("d").expect_only({"x"}), Equals("d.y: unknown field (expected one of: x)"));
  CHECK_THROWS_WITH(root.at("e").as_enum(kDtypeNames),
                    Equals("e: 'fp7' is not one of fp32, tf32, fp16, bf16, fp8 or int8"));
  CHECK_THROWS_WITH(root.at("f").as_int(), Equals("f: expected an integer, got 1e+30"));
  CHECK_THROWS_WITH(root.at("d").elements(), Equals("d: expected an array, got an object"));
}

TEST_CASE("syntax errors give the file, line and column", "[json][errors]") {
  CHECK_THROWS_WITH(JsonDocument::parse_text("{\n  \"a\": 1,\n  oops\n}", "bad.json"),
                    Catch::Matchers::StartsWith("bad.json:3:3: invalid JSON: "));
  // Found by the profile fuzz harness: a number beyond a double escaped as nlohmann's out_of_range.
  CHECK_THROWS_WITH(JsonDocument::parse_text("{\"a\": [0.1172301E912135118]}", "big.json"),
                    Equals("big.json: invalid JSON: number overflow parsing '0.1172301E912135118'"));
  CHECK_THROWS_WITH(JsonDocument::parse_file("/nonexistent/file.json"),
                    Equals("/nonexistent/file.json: cannot open file"));
}

TEST_CASE("bounded integers name their bounds", "[json][errors]") {
  const auto document = JsonDocument::parse_text(R"({"a": 5, "b": 4294967296, "c": -1})", "x.json");
  const JsonCursor root = document.root();
  CHECK(root.at("a").as_int_in(1, 5) == 5);
  CHECK_THROWS_WITH(root.at("a").as_int_in(6, 9), Equals("a: expected an integer from 6 to 9, got 5"));
  CHECK(root.at("a").as_nonnegative_int32() == 5);
  CHECK_THROWS_WITH(root.at("b").as_nonnegative_int32(),
                    Equals("b: expected an integer from 0 to 2147483647, got 4294967296"));
  CHECK_THROWS_WITH(root.at("c").as_nonnegative_int32(), Equals("c: expected an integer from 0 to 2147483647, got -1"));
}

TEST_CASE("a file too large to parse in memory is refused before it is read", "[json][errors][size]") {
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "weft-json-cursor-test-huge.json";
  { std::ofstream create(file); }
  // A sparse file: its size is 1 TiB, it takes no disk.
  std::filesystem::resize_file(file, std::uintmax_t{1} << 40);
  CHECK_THROWS_WITH(JsonDocument::parse_file(file),
                    Catch::Matchers::Contains("1048576 MiB would take about 10240 GiB to read; the limit "
                                              "is") &&
                        Catch::Matchers::Contains("half of this machine's"));
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace weft
