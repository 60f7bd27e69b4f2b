#include "simulator/workload/stage_graph.hpp"

namespace weft {

StageGraph StageGraph::chain(int groups, int pp) {
  StageGraph graph;
  graph.inputs_.resize(static_cast<std::size_t>(groups));
  graph.successor_.resize(static_cast<std::size_t>(groups));
  graph.position_.resize(static_cast<std::size_t>(groups));
  for (int g = 0; g < groups; ++g) {
    const auto i = static_cast<std::size_t>(g);
    if (g > 0) graph.inputs_[i].push_back(g - 1);
    graph.successor_[i] = g + 1 < groups ? g + 1 : -1;
    graph.position_[i] = g % pp;
  }
  return graph;
}

StageGraph StageGraph::modality(const MultimodalSpec& model, std::span<const int> module_stages) {
  const std::size_t modules = model.modules.size();
  std::vector<int> first(modules, 0);
  std::vector<int> last(modules, 0);
  int next = 0;
  for (std::size_t m = 0; m < modules; ++m) {
    if (model.modules[m].projector) {  // on the last stage of the module it reads
      first[m] = last[m] = last[model.modules[m].inputs.front()];
      continue;
    }
    first[m] = next;
    next += module_stages[m];
    last[m] = next - 1;
  }
  StageGraph graph;
  graph.inputs_.resize(static_cast<std::size_t>(next));
  graph.successor_.assign(static_cast<std::size_t>(next), -1);
  for (std::size_t m = 0; m < modules; ++m) {
    if (model.modules[m].projector) continue;
    for (int g = first[m] + 1; g <= last[m]; ++g) {
      graph.inputs_[static_cast<std::size_t>(g)].push_back(g - 1);
      graph.successor_[static_cast<std::size_t>(g - 1)] = g;
    }
    for (std::size_t input : model.modules[m].inputs) {
      graph.inputs_[static_cast<std::size_t>(first[m])].push_back(last[input]);
      graph.successor_[static_cast<std::size_t>(last[input])] = first[m];
    }
  }
  // Stages after each on its path to the loss; a successor is always numbered higher.
  std::vector<int> after(static_cast<std::size_t>(next), 0);
  graph.position_.resize(static_cast<std::size_t>(next));
  for (int g = next - 1; g >= 0; --g) {
    const int successor = graph.successor_[static_cast<std::size_t>(g)];
    after[static_cast<std::size_t>(g)] = successor < 0 ? 0 : after[static_cast<std::size_t>(successor)] + 1;
    graph.position_[static_cast<std::size_t>(g)] = next - 1 - after[static_cast<std::size_t>(g)];
  }
  return graph;
}

}  // namespace weft
