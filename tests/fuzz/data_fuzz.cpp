// Data sections (datasets, length distributions) and samples files (JSON Lines): the first byte
// picks which.
#include <sstream>
#include <string>

#include "simulator/workload/data/data_spec.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  if (data[0] % 2 == 0) {
    return weft::fuzz::load_json(data + 1, size - 1, [](const weft::JsonCursor& root) { weft::load_data_spec(root); });
  }
  std::istringstream lines{std::string(weft::fuzz::text_of(data + 1, size - 1))};
  try {
    weft::read_samples(lines, "fuzz.jsonl");
  } catch (const weft::InputError&) {
  }
  return 0;
}
