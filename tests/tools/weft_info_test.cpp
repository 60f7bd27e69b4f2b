#include <catch2/catch.hpp>

#include "tests/support/run_command.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;

TEST_CASE("weft info lists the backends and --require-cuda fails clearly without a GPU", "[cli]") {
  const auto info = test::run_weft("info");
  CHECK(info.exit_code == 0);
  CHECK_THAT(info.out, Contains("cpu backend: available") && Contains("cuda backend: "));
  const auto require = test::run_weft("info --require-cuda");
  if (info.out.find("kernel self-test: passed") != std::string::npos) {
    CHECK(require.exit_code == 0);
  } else {
    CHECK(require.exit_code == 2);
    CHECK_THAT(require.err, Contains("weft: error: --require-cuda: "));
  }
}

}  // namespace
}  // namespace weft
