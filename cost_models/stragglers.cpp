#include "cost_models/stragglers.hpp"

#include <algorithm>
#include <set>
#include <string>

#include "simulator/core/random_stream.hpp"

namespace weft {
namespace {

using SlowParts = std::vector<std::pair<std::int64_t, double>>;

void record(std::vector<double>& speeds, std::size_t count, std::int64_t part, double speed) {
  if (speeds.empty()) speeds.assign(count, 1.0);
  speeds[static_cast<std::size_t>(part)] *= speed;
}

SlowParts slow_parts(const std::vector<double>& speeds) {
  SlowParts slow;
  for (std::size_t i = 0; i < speeds.size(); ++i) {
    if (speeds[i] < 1.0) slow.emplace_back(static_cast<std::int64_t>(i), speeds[i]);
  }
  std::stable_sort(slow.begin(), slow.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  return slow;
}

double read_speed(const JsonCursor& json) {
  const double speed = json.as_positive_number();
  if (speed > 1.0) json.fail("expected a speed in (0, 1]: the fraction of its healthy rate the part delivers");
  return speed;
}

// A list of {"<key>": index, "speed": s} entries, each index below `count` and listed once.
template <class Slow>
void read_list(const JsonCursor& json, const char* key, std::int64_t count, const char* what, Slow&& slow) {
  std::set<std::int64_t> seen;
  for (const JsonCursor& entry : json.elements()) {
    entry.expect_only({key, "speed"});
    const JsonCursor index_json = entry.at(key);
    const std::int64_t index = index_json.as_nonnegative_int();
    if (index >= count) {
      index_json.fail("expected a " + std::string(what) + " below " + std::to_string(count) + " (the cluster has " +
                      std::to_string(count) + ")");
    }
    if (!seen.insert(index).second) index_json.fail(std::string(what) + " " + std::to_string(index) + " listed twice");
    slow(index, read_speed(entry.at("speed")));
  }
}

}  // namespace

Stragglers::Stragglers(std::int64_t gpus, int gpus_per_node) : gpus_(gpus), gpus_per_node_(gpus_per_node) {}

void Stragglers::slow_gpu(std::int64_t index, double speed) {
  record(gpu_speed_, static_cast<std::size_t>(gpus_), index, speed);
}

void Stragglers::slow_nic(std::int64_t index, double speed) {
  const std::int64_t nodes = (gpus_ + gpus_per_node_ - 1) / gpus_per_node_;
  record(nic_speed_, static_cast<std::size_t>(nodes), index, speed);
}

void Stragglers::slow_nvlink(std::int64_t index, double speed) {
  const std::int64_t nodes = (gpus_ + gpus_per_node_ - 1) / gpus_per_node_;
  record(nvlink_speed_, static_cast<std::size_t>(nodes), index, speed);
}

void Stragglers::finish() {
  slow_gpus_ = slow_parts(gpu_speed_);
  slow_nics_ = slow_parts(nic_speed_);
  slow_nvlinks_ = slow_parts(nvlink_speed_);
}

Stragglers read_stragglers(const JsonCursor& json, std::int64_t gpus, int gpus_per_node) {
  json.expect_only({"gpus", "nodes", "nics", "nvlinks", "throttled"});
  Stragglers stragglers(gpus, gpus_per_node);
  const std::int64_t nodes = (gpus + gpus_per_node - 1) / gpus_per_node;
  if (auto list = json.find("gpus")) {
    read_list(*list, "gpu", gpus, "GPU", [&](std::int64_t gpu, double speed) { stragglers.slow_gpu(gpu, speed); });
  }
  if (auto list = json.find("nodes")) {
    read_list(*list, "node", nodes, "node", [&](std::int64_t node, double speed) {
      for (std::int64_t g = node * gpus_per_node; g < std::min(gpus, (node + 1) * gpus_per_node); ++g)
        stragglers.slow_gpu(g, speed);
    });
  }
  if (auto list = json.find("nics")) {
    read_list(*list, "node", nodes, "node", [&](std::int64_t node, double speed) { stragglers.slow_nic(node, speed); });
  }
  if (auto list = json.find("nvlinks")) {
    read_list(*list, "node", nodes, "node",
              [&](std::int64_t node, double speed) { stragglers.slow_nvlink(node, speed); });
  }
  if (auto throttled = json.find("throttled")) {
    throttled->expect_only({"share", "speed", "seed"});
    const JsonCursor share_json = throttled->at("share");
    const double share = share_json.as_nonnegative_number();
    if (share > 1.0) share_json.fail("expected the share of GPUs throttled, in [0, 1]");
    const JsonCursor range = throttled->at("speed");
    const std::vector<JsonCursor> bounds = range.elements();
    if (bounds.size() != 2) range.fail("expected [slowest, fastest], two speeds in (0, 1]");
    const double low = read_speed(bounds[0]);
    const double high = read_speed(bounds[1]);
    if (low > high) range.fail("expected [slowest, fastest]: the first is above the second");
    const auto seed = static_cast<std::uint64_t>(throttled->at("seed").as_nonnegative_int());
    // Two draws per GPU, whether throttled or not, so that a GPU's fate does not depend on the
    // range given.
    RandomStream stream(seed);
    for (std::int64_t g = 0; g < gpus; ++g) {
      const double pick = stream.uniform();
      const double where = stream.uniform();
      if (pick < share) stragglers.slow_gpu(g, low + (high - low) * where);
    }
  }
  stragglers.finish();
  return stragglers;
}

}  // namespace weft
