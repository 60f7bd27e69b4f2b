#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "simulator/core/json_cursor.hpp"

namespace weft {

// Parts of a cluster that run below their spec (docs/stragglers.md): GPUs whose kernels take
// longer (a throttled clock, a degraded part), and nodes whose NICs or NVLinks deliver part of
// their bandwidth. A speed is the fraction of the healthy rate a part delivers, in (0, 1]; causes that
// hit one part multiply.
class Stragglers {
 public:
  Stragglers(std::int64_t gpus, int gpus_per_node);

  // Every part at full speed.
  bool empty() const { return slow_gpus_.empty() && slow_nics_.empty() && slow_nvlinks_.empty(); }
  // Parts past the cluster the section was read for (a sweep over more GPUs) run at full speed.
  double gpu(std::int64_t index) const { return speed_of(gpu_speed_, index); }
  double nic(std::int64_t index) const { return speed_of(nic_speed_, index); }
  double nvlink(std::int64_t index) const { return speed_of(nvlink_speed_, index); }

  // (GPU or node, speed) of the parts below full speed, slowest first, then by index.
  const std::vector<std::pair<std::int64_t, double>>& slow_gpus() const { return slow_gpus_; }
  const std::vector<std::pair<std::int64_t, double>>& slow_nics() const { return slow_nics_; }
  const std::vector<std::pair<std::int64_t, double>>& slow_nvlinks() const { return slow_nvlinks_; }

  void slow_gpu(std::int64_t index, double speed);
  void slow_nic(std::int64_t index, double speed);
  void slow_nvlink(std::int64_t index, double speed);
  // Sorts the lists of slow parts; call after the last slow_gpu, slow_nic or slow_nvlink.
  void finish();

 private:
  static double speed_of(const std::vector<double>& speeds, std::int64_t part) {
    const auto i = static_cast<std::size_t>(part);
    return i < speeds.size() ? speeds[i] : 1.0;
  }

  std::int64_t gpus_;
  int gpus_per_node_;
  std::vector<double> gpu_speed_;     // per GPU; empty while all run at full speed
  std::vector<double> nic_speed_;     // per node; likewise
  std::vector<double> nvlink_speed_;  // per node; likewise
  std::vector<std::pair<std::int64_t, double>> slow_gpus_;
  std::vector<std::pair<std::int64_t, double>> slow_nics_;
  std::vector<std::pair<std::int64_t, double>> slow_nvlinks_;
};

// Reads a cluster's "stragglers" section, for a cluster of `gpus` GPUs, `gpus_per_node` a node:
//   {"gpus": [{"gpu": 17, "speed": 0.8}], "nodes": [{"node": 3, "speed": 0.9}],
//    "nics": [{"node": 5, "speed": 0.5}], "nvlinks": [{"node": 2, "speed": 0.5}],
//    "throttled": {"share": 0.02, "speed": [0.7, 0.95], "seed": 1}}
// "throttled" draws, for each GPU independently, whether it is throttled (probability "share")
// and its speed (uniform over the range), from a seeded stream: the same seed gives the same
// GPUs. Errors name the JSON path.
Stragglers read_stragglers(const JsonCursor& json, std::int64_t gpus, int gpus_per_node);

}  // namespace weft
