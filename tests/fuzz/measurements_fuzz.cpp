// Measurement files, and the calibration weft calibrate fits to those that read.
#include "calibration/calibrate.hpp"
#include "calibration/measurements.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return weft::fuzz::load_json(data, size, [](const weft::JsonCursor& root) {
    weft::calibrate({{"fuzz.json", weft::read_measurements(root)}});
  });
}
