#include "simulator/resilience/pipeline_reinstantiation.hpp"

#include <algorithm>

namespace weft {
namespace {

// Nodes the pipelines other than `self` can lend and still keep n0 each.
int spare_nodes(const std::vector<int>& pipelines, std::size_t self, int n0) {
  int spare = 0;
  for (std::size_t k = 0; k < pipelines.size(); ++k) {
    if (k != self && pipelines[k] > n0) spare += pipelines[k] - n0;
  }
  return spare;
}

// Moves one node to `self` from the pipeline with the most nodes above n0 (the first such).
void borrow_one(std::vector<int>& pipelines, std::size_t self) {
  std::size_t lender = self;
  for (std::size_t k = 0; k < pipelines.size(); ++k) {
    if (k != self && (lender == self || pipelines[k] > pipelines[lender])) lender = k;
  }
  --pipelines[lender];
  ++pipelines[self];
}

// The smallest pipeline other than `self` (the first such).
std::size_t smallest_other(const std::vector<int>& pipelines, std::size_t self) {
  std::size_t out = self;
  for (std::size_t k = 0; k < pipelines.size(); ++k) {
    if (k != self && (out == self || pipelines[k] < pipelines[out])) out = k;
  }
  return out;
}

}  // namespace

Reinstantiation reinstantiate(std::vector<int> pipelines, const std::vector<int>& lost, int n0, int f) {
  Reinstantiation out;
  std::vector<bool> broken(pipelines.size(), false);
  for (std::size_t k = 0; k < pipelines.size(); ++k) {
    pipelines[k] -= lost[k];
    broken[k] = lost[k] > 0;
  }
  // Pipelines left with no node are gone.
  for (std::size_t k = pipelines.size(); k-- > 0;) {
    if (pipelines[k] == 0) {
      pipelines.erase(pipelines.begin() + static_cast<std::ptrdiff_t>(k));
      broken.erase(broken.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  for (std::size_t k = 0; k < pipelines.size(); ++k) {
    if (!broken[k]) continue;
    if (pipelines[k] >= n0) {
      out.steps.push_back(ReinstantiationStep::simple);
    } else if (spare_nodes(pipelines, k, n0) >= n0 - pipelines[k]) {
      while (pipelines[k] < n0) borrow_one(pipelines, k);
      out.steps.push_back(ReinstantiationStep::borrowed);
    } else {
      while (pipelines[k] < n0 && pipelines.size() > 1) {
        const std::size_t other = smallest_other(pipelines, k);
        pipelines[k] += pipelines[other];
        pipelines.erase(pipelines.begin() + static_cast<std::ptrdiff_t>(other));
        broken.erase(broken.begin() + static_cast<std::ptrdiff_t>(other));
        if (other < k) --k;
      }
      out.steps.push_back(ReinstantiationStep::merged);
      if (pipelines[k] < n0) out.feasible = false;
    }
  }
  out.feasible = out.feasible && static_cast<int>(pipelines.size()) >= f + 1;
  out.pipelines = std::move(pipelines);
  return out;
}

std::vector<int> draw_pipelines_hit(const std::vector<int>& pipelines, int lost, RandomStream& random) {
  std::vector<int> out(pipelines.size(), 0);
  for (int i = 0; i < lost; ++i) {
    int left = 0;
    for (std::size_t k = 0; k < pipelines.size(); ++k) left += pipelines[k] - out[k];
    if (left == 0) break;
    int pick = std::min(static_cast<int>(random.uniform() * left), left - 1);
    for (std::size_t k = 0; k < pipelines.size() && pick >= 0; ++k) {
      pick -= pipelines[k] - out[k];
      if (pick < 0) ++out[k];
    }
  }
  return out;
}

}  // namespace weft
