#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "simulator/resilience/bamboo_planner.hpp"

namespace weft {

// Which stages of Bamboo's pipelines have lost their nodes during a run (its NSDI 2023 paper,
// §4.3-4.4, as Oobleck's evaluation runs it): a lost stage is run by the node before it, which
// holds its layers; losing a stage next to one already lost (the node covering two stages, or the
// one holding the lost stage's copy) is fatal.
class BambooStages {
 public:
  enum class Loss : std::uint8_t { unused, covered, fatal };

  explicit BambooStages(BambooPlanner& planner) : planner_(planner) {}

  // `pipelines` pipelines, every stage on nodes of its own.
  void reset(int pipelines) { lost_.assign(static_cast<std::size_t>(pipelines), {}); }
  int pipelines() const { return static_cast<int>(lost_.size()); }
  // The job's node `pick` fails, its nodes counted pipeline by pipeline over the stages each still
  // runs on its own nodes, then those no pipeline uses: `unused` for one of those (it fails
  // harmlessly), else whether the node before its stage takes it over or the job must restart.
  Loss lose_node(std::int64_t pick);
  // Samples a second of the job, which trains at the pace of its slowest pipeline; nullopt when
  // its pipelines do not run.
  std::optional<double> samples_per_s() const;

 private:
  static bool is_lost(const std::vector<int>& gone, int position);

  BambooPlanner& planner_;
  std::vector<std::vector<int>> lost_;  // per pipeline: positions run by the node before
};

}  // namespace weft
