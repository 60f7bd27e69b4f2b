#include "simulator/resilience/node_pool.hpp"

#include <algorithm>

namespace weft {

NodePool::NodePool(std::int64_t job_nodes, std::int64_t spare_nodes)
    : job_nodes_(job_nodes),
      job_size_(job_nodes),
      healthy_(static_cast<std::size_t>(job_nodes + spare_nodes), true),
      in_job_(static_cast<std::size_t>(job_nodes + spare_nodes), false) {
  std::fill(in_job_.begin(), in_job_.begin() + job_nodes, true);
  // Spares are taken from the end of the list first, in node order.
  for (std::int64_t node = job_nodes + spare_nodes - 1; node >= job_nodes; --node) idle_.push_back(node);
}

bool NodePool::take_out(std::int64_t node, double repaired_at) {
  const auto index = static_cast<std::size_t>(node);
  healthy_[index] = false;
  repairs_.emplace(repaired_at, node);
  if (in_job_[index]) {
    in_job_[index] = false;
    --job_size_;
    return true;
  }
  idle_.erase(std::find(idle_.begin(), idle_.end(), node));
  return false;
}

void NodePool::repair_next() {
  const std::int64_t node = repairs_.top().second;
  repairs_.pop();
  healthy_[static_cast<std::size_t>(node)] = true;
  idle_.push_back(node);
}

bool NodePool::fill_job() {
  while (job_size_ < job_nodes_ && !idle_.empty()) {
    in_job_[static_cast<std::size_t>(idle_.back())] = true;
    idle_.pop_back();
    ++job_size_;
  }
  return job_complete();
}

}  // namespace weft
