// Execution plans, as weft simulate --emit-plan and weft plan --emit-plan write them (DIP plans
// included) and weft live reads them.
#include "simulator/plan/execution_plan.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return weft::fuzz::load_json(data, size, [](const weft::JsonCursor& root) { weft::read_execution_plan(root); });
}
