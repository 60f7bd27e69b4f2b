// Calibration profiles.
#include "cost_models/profile_format.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return weft::fuzz::load_json(data, size, [](const weft::JsonCursor& root) { weft::read_profile(root); });
}
