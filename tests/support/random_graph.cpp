#include "tests/support/random_graph.hpp"

#include <algorithm>
#include <random>
#include <string>

namespace weft::test {

RandomGraph make_random_graph(std::uint64_t seed, const RandomGraphShape& shape) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng); };
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };

  UnitPlatform p;
  std::vector<DeviceId> gpus;
  std::vector<DeviceId> links;
  for (int g = 0; g < shape.gpu_count; ++g) gpus.push_back(p.add_gpu("gpu" + std::to_string(g)));
  for (int l = 0; l < shape.link_count; ++l) links.push_back(p.add_link("link" + std::to_string(l)));

  std::vector<TimeNs> duration;
  std::vector<OpId> earlier;
  auto add_dependencies = [&](OpId op) {
    if (earlier.empty()) return;
    const int count = uniform(0, shape.max_dependencies);
    for (int d = 0; d < count; ++d) {
      const OpId from = earlier[static_cast<std::size_t>(uniform(0, static_cast<int>(earlier.size()) - 1))];
      if (chance(shape.control_share)) {
        p.builder().add_control_edge(from, op);
      } else {
        const DeviceId reader = p.builder().op_device(op);
        const bool on_gpu = std::find(gpus.begin(), gpus.end(), reader) != gpus.end();
        const DeviceId device = shape.tensors_on_reader && on_gpu
                                    ? reader
                                    : gpus[static_cast<std::size_t>(uniform(0, shape.gpu_count - 1))];
        // Any kind but bundle, which only composites read and write.
        const auto kind = static_cast<TensorKind>(uniform(0, static_cast<int>(TensorKind::bundle) - 1));
        const TensorId tensor =
            p.tensor("t" + std::to_string(p.builder().tensor_count()), device, uniform(0, 4096), kind);
        p.builder().add_input(op, tensor);
        // Some inputs exist before the run (no producer): they add memory but no dependency.
        if (chance(0.8)) p.builder().add_output(from, tensor);
      }
    }
  };

  while (static_cast<int>(duration.size()) < shape.op_count) {
    const std::string name = "op" + std::to_string(duration.size());
    if (shape.gpu_count >= 2 && chance(shape.collective_share)) {
      std::vector<DeviceId> members_on = gpus;
      std::shuffle(members_on.begin(), members_on.end(), rng);
      members_on.resize(static_cast<std::size_t>(uniform(2, shape.gpu_count)));
      std::vector<OpId> members;
      TimeNs longest = 0;
      for (DeviceId gpu : members_on) {
        const TimeNs ns = uniform(0, 500);
        longest = std::max(longest, ns);
        members.push_back(p.op(name + "." + std::to_string(members.size()), p.comm(gpu), ns, OpClass::allreduce));
        duration.push_back(ns);
      }
      for (OpId member : members) {
        duration[member.value()] = longest;
        add_dependencies(member);
      }
      p.builder().add_collective(name, members);
      earlier.insert(earlier.end(), members.begin(), members.end());
      continue;
    }
    const TimeNs ns = chance(0.05) ? 0 : uniform(1, 1000);
    OpId op;
    if (!links.empty() && chance(0.2)) {
      op = p.op(name, p.comm(links[static_cast<std::size_t>(uniform(0, shape.link_count - 1))]), ns, OpClass::send);
    } else {
      const DeviceId gpu = gpus[static_cast<std::size_t>(uniform(0, shape.gpu_count - 1))];
      op = chance(0.3) ? p.op(name, p.comm(gpu), ns, OpClass::send) : p.op(name, p.compute(gpu), ns);
    }
    duration.push_back(ns);
    add_dependencies(op);
    earlier.push_back(op);
  }
  RooflineCostModel cost_model = p.cost_model();
  return {p.build(), std::move(cost_model), std::move(duration)};
}

}  // namespace weft::test
