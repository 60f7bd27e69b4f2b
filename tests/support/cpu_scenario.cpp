#include "tests/support/cpu_scenario.hpp"

namespace weft::test {

std::string test_cpu_cluster() {
  return R"({"name": "test", "gpu": {"name": "test-cpu", "kind": "cpu", "peak_tflops": {"bf16": 0.05, "fp32": 0.05},
             "memory_bandwidth_GBps": 10, "memory_MiB": 4096}, "gpus": 2, "gpus_per_node": 2, "nvlink_GBps": 5,
             "nvlink_latency_us": 2, "nics_per_node": 1, "nic_Gbps": 40, "topology": "rail-optimized"})";
}

std::string tiny_gpt_scenario(const std::string& parallel, const std::string& cluster) {
  return R"({"model": {"base": "gpt-4l-512", "layers": 2, "hidden": 128, "ffn_hidden": 512, "heads": 4,
                       "vocab": 1024, "max_positions": 64},
             "cluster": )" +
         cluster + R"(, "parallel": )" + parallel + R"(,
             "training": {"global_batch": 4, "micro_batch": 1, "seq_len": 64}})";
}

}  // namespace weft::test
