#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

namespace weft {

// The nodes a run may use: the job's and its hot spares, each healthy or out for repair until a
// given time, each healthy one either in the job or idle. Nodes are numbered so that a rack holds
// consecutive numbers.
class NodePool {
 public:
  NodePool(std::int64_t job_nodes, std::int64_t spare_nodes);

  std::int64_t size() const { return static_cast<std::int64_t>(healthy_.size()); }
  bool healthy(std::int64_t node) const { return healthy_[static_cast<std::size_t>(node)]; }
  bool in_job(std::int64_t node) const { return in_job_[static_cast<std::size_t>(node)]; }
  // True when the job has every node it needs.
  bool job_complete() const { return job_size_ == job_nodes_; }
  std::int64_t job_size() const { return job_size_; }

  // Takes a healthy node out of service until `repaired_at`; true when it was in the job.
  bool take_out(std::int64_t node, double repaired_at);
  // When the next node comes back from repair; infinite when none is out.
  double next_repair() const {
    return repairs_.empty() ? std::numeric_limits<double>::infinity() : repairs_.top().first;
  }
  // Brings that node back, idle.
  void repair_next();
  // Moves idle nodes into the job until it is complete or none is left; true when complete.
  bool fill_job();

 private:
  using Repair = std::pair<double, std::int64_t>;

  std::int64_t job_nodes_;
  std::int64_t job_size_;
  std::vector<bool> healthy_;
  std::vector<bool> in_job_;
  std::vector<std::int64_t> idle_;
  std::priority_queue<Repair, std::vector<Repair>, std::greater<>> repairs_;
};

}  // namespace weft
