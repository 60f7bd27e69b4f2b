// Model, cluster, device and software-stack specs: the first byte picks the loader, the rest is
// the document (seeds carry the byte of their kind).
#include "cost_models/cluster_spec.hpp"
#include "cost_models/device_spec.hpp"
#include "simulator/workload/multimodal_spec.hpp"
#include "simulator/workload/software_stack.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t kind = data[0] % 4;
  return weft::fuzz::load_json(data + 1, size - 1, [kind](const weft::JsonCursor& root) {
    switch (kind) {
      case 0:
        weft::load_multimodal_spec(root);
        break;
      case 1:
        weft::load_cluster_spec(root);
        break;
      case 2:
        weft::load_device_spec(root);
        break;
      default:
        weft::load_software_stack(root);
        break;
    }
  });
}
