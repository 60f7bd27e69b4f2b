#include "tests/support/cpu_scenario.hpp"

namespace weft::test {

std::string test_cpu_cluster(int ranks) {
  const std::string count = std::to_string(ranks);
  return R"({"name": "test", "gpu": {"name": "test-cpu", "kind": "cpu", "peak_tflops": {"bf16": 0.05, "fp32": 0.05},
             "memory_bandwidth_GBps": 10, "memory_MiB": 4096}, "gpus": )" +
         count + R"(, "gpus_per_node": )" + count + R"(, "nvlink_GBps": 5,
             "nvlink_latency_us": 2, "nics_per_node": 1, "nic_Gbps": 40, "topology": "rail-optimized"})";
}

std::string tiny_gpt_scenario(const std::string& parallel, const std::string& cluster) {
  return R"({"model": {"base": "gpt-4l-512", "layers": 2, "hidden": 128, "ffn_hidden": 512, "heads": 4,
                       "vocab": 1024, "max_positions": 64},
             "cluster": )" +
         cluster + R"(, "parallel": )" + parallel + R"(,
             "training": {"global_batch": 4, "micro_batch": 1, "seq_len": 64}})";
}

std::string tiny_vlm_scenario(const std::string& parallel, const std::string& cluster, bool audio) {
  const std::string encoder = R"("layers": 2, "hidden": 128, "ffn_hidden": 512, "heads": 4)";
  std::string modules = R"({"name": "vision", "model": {"base": "vit-5b", )" + encoder +
                        R"(}, "tokens": "images", "tokens_per_image": 16},
                           {"name": "vision-projector", "projector": {"ffn_hidden": 256}},)";
  if (audio) {
    modules += R"({"name": "audio", "model": {"base": "whisper-large-v3-encoder", )" + encoder +
               R"(}, "tokens": "audio", "tokens_per_second": 8, "inputs": []},
                  {"name": "audio-projector", "projector": {"ffn_hidden": 256}},)";
  }
  modules += R"({"name": "language", "model": {"base": "gpt-4l-512", "layers": 4, "hidden": 128, "ffn_hidden": 512,
                 "heads": 4, "vocab": 1024, "max_positions": 128})";
  if (audio) modules += R"(, "inputs": ["vision-projector", "audio-projector"])";
  return R"({"model": {"name": "tiny-vlm", "modules": [)" + modules + R"(}]}, "cluster": )" + cluster +
         R"(, "parallel": )" + parallel + R"(, "training": {"global_batch": 4, "micro_batch": 1, "seq_len": 128,
             "images": 2)" +
         (audio ? R"(, "audio_seconds": 2)" : "") + "}}";
}

}  // namespace weft::test
