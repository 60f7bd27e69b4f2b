// Chrome traces as weft validate reads them: simulated (weft simulate --trace) and measured (weft
// live --trace).
#include "calibration/trace_comparison.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return weft::fuzz::load_json(data, size, [](const weft::JsonCursor& root) { weft::summarize_trace(root); });
}
