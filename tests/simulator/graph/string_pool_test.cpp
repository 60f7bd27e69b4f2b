#include "simulator/graph/string_pool.hpp"

#include <catch2/catch.hpp>

namespace weft {
namespace {

TEST_CASE("equal names share one id and read back unchanged", "[graph]") {
  StringPool pool;
  const NameId a = pool.intern("layer0.qkv");
  const NameId b = pool.intern("layer0.proj");
  CHECK(pool.intern("layer0.qkv") == a);
  CHECK(a != b);
  CHECK(pool.view(a) == "layer0.qkv");
  CHECK(pool.view(b) == "layer0.proj");
  CHECK(pool.view(NameId::none()).empty());
  pool.freeze();
  CHECK(pool.view(b) == "layer0.proj");
  CHECK(pool.size() == 2);
}

}  // namespace
}  // namespace weft
