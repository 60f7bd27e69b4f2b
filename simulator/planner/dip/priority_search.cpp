#include "simulator/planner/dip/priority_search.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <string>

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "simulator/core/input_error.hpp"

namespace weft::dip {
namespace {

struct Node {
  std::size_t parent = 0;
  int depth = 0;             // groups assigned on the path to it
  int value = 0;             // the priority it gives group depth - 1
  std::vector<int> untried;  // values for the next group not expanded yet
  std::vector<std::size_t> children;
  double best = 0.0;
  std::int64_t visits = 0;
  bool complete = false;  // every assignment below it has been seen
};

class Search {
 public:
  Search(int groups, const std::vector<std::vector<int>>& follows,
         const std::function<double(const std::vector<int>&)>& score, const PrioritySearchOptions& options)
      : n_(groups), follows_(follows), score_(score), options_(options), rng_(options.seed) {
    // Groups that follow each group, directly or not: each needs a value below the group's.
    std::vector<std::vector<int>> followers(static_cast<std::size_t>(n_));
    for (int g = 0; g < n_; ++g) {
      for (int f : follows_[static_cast<std::size_t>(g)]) followers[static_cast<std::size_t>(f)].push_back(g);
    }
    descendants_.assign(static_cast<std::size_t>(n_), 0);
    for (int g = n_ - 1; g >= 0; --g) {
      std::vector<std::uint8_t> seen(static_cast<std::size_t>(n_), 0);
      std::vector<int> stack(followers[static_cast<std::size_t>(g)]);
      while (!stack.empty()) {
        const int h = stack.back();
        stack.pop_back();
        if (seen[static_cast<std::size_t>(h)] != 0) continue;
        seen[static_cast<std::size_t>(h)] = 1;
        ++descendants_[static_cast<std::size_t>(g)];
        for (int next : followers[static_cast<std::size_t>(h)]) stack.push_back(next);
      }
    }
  }

  PrioritySearchResult run() {
    nodes_.push_back({});
    const std::vector<int> none(static_cast<std::size_t>(n_), 0);
    nodes_[0].untried = valid_values(none, used_values(none), 0);
    tbb::task_arena arena(std::max(1, options_.threads));
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    const bool budgeted = options_.time_budget_s > 0.0;
    while (result_.iterations < options_.max_iterations && !nodes_[0].complete &&
           !(budgeted && elapsed() >= options_.time_budget_s) && !(options_.stop && options_.stop())) {
      // Select and expand a batch, drawing every random number in order.
      std::vector<std::size_t> expanded;
      std::vector<std::vector<int>> jobs;
      std::vector<std::size_t> job_node;
      while (static_cast<int>(expanded.size()) < options_.batch && result_.iterations < options_.max_iterations &&
             !nodes_[0].complete) {
        const std::size_t leaf = select();
        if (leaf == kBusy) break;
        if (nodes_[leaf].untried.empty()) {  // a dead end: no value is left for its next group
          nodes_[leaf].complete = true;
          settle(leaf, 0.0);
          continue;
        }
        ++result_.iterations;
        const std::size_t child = expand(leaf);
        expanded.push_back(child);
        for (std::vector<int>& completion : completions(child)) {
          jobs.push_back(std::move(completion));
          job_node.push_back(child);
        }
      }
      if (expanded.empty()) break;
      // Score in parallel; then propagate in order.
      std::vector<double> scores(jobs.size(), 0.0);
      arena.execute([&] {
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, jobs.size(), 1), [&](const auto& range) {
          for (std::size_t j = range.begin(); j != range.end(); ++j) scores[j] = score_(jobs[j]);
        });
      });
      result_.evaluations += static_cast<std::int64_t>(jobs.size());
      for (std::size_t child : expanded) {
        double best = 0.0;
        for (std::size_t j = 0; j < jobs.size(); ++j) {
          if (job_node[j] != child) continue;
          best = std::max(best, scores[j]);
          if (result_.priorities.empty() || scores[j] > result_.score) {
            result_.priorities = jobs[j];
            result_.score = scores[j];
            result_.improvements.push_back({elapsed(), result_.evaluations, scores[j]});
          }
        }
        settle(child, best);
      }
    }
    result_.exhausted = nodes_[0].complete;
    return result_;
  }

 private:
  std::vector<int> assignment(std::size_t node) const {
    std::vector<int> priorities(static_cast<std::size_t>(n_), 0);
    for (; node != 0; node = nodes_[node].parent)
      priorities[static_cast<std::size_t>(nodes_[node].depth - 1)] = nodes_[node].value;
    return priorities;
  }

  // Unused values below the priorities of the groups `group` follows that leave enough unused
  // values below them for the groups that follow `group` (others lead only to dead ends), the
  // `window` largest of them if a window is set, in a seeded random order. `used[v]`: value v is
  // taken by one of the groups before `group`.
  std::vector<int> valid_values(const std::vector<int>& priorities, const std::vector<std::uint8_t>& used, int group) {
    if (group == n_) return {};
    int below = n_ + 1;
    for (int f : follows_[static_cast<std::size_t>(group)])
      below = std::min(below, priorities[static_cast<std::size_t>(f)]);
    std::vector<int> values;
    int free_below = 0;
    for (int v = 1; v < below; ++v) {
      if (used[static_cast<std::size_t>(v)] != 0) continue;
      if (free_below >= descendants_[static_cast<std::size_t>(group)]) values.push_back(v);
      ++free_below;
    }
    const auto window = static_cast<std::size_t>(options_.window);
    if (window > 0 && values.size() > window) values.erase(values.begin(), values.end() - options_.window);
    std::shuffle(values.begin(), values.end(), rng_);
    return values;
  }

  std::vector<std::uint8_t> used_values(const std::vector<int>& priorities) const {
    std::vector<std::uint8_t> used(static_cast<std::size_t>(n_) + 1, 0);
    for (int p : priorities) used[static_cast<std::size_t>(p)] = 1;
    used[0] = 0;
    return used;
  }

  double ucb(const Node& child, const Node& parent) const {
    return std::pow(child.best, options_.alpha) +
           options_.beta * std::sqrt(std::log(static_cast<double>(parent.visits)) / static_cast<double>(child.visits));
  }

  // From the root down through fully expanded nodes, by the UCB rule among incomplete children
  // that are not waiting for their scores; kBusy when every way down waits.
  static constexpr std::size_t kBusy = static_cast<std::size_t>(-1);
  std::size_t select() const {
    std::size_t x = 0;
    while (nodes_[x].untried.empty() && nodes_[x].depth < n_) {
      std::size_t pick = 0;
      double best = -1.0;
      bool waiting = false;
      for (std::size_t child : nodes_[x].children) {
        if (nodes_[child].complete) continue;
        if (nodes_[child].visits == 0) {
          waiting = true;
          continue;
        }
        const double value = ucb(nodes_[child], nodes_[x]);
        if (value > best) {
          best = value;
          pick = child;
        }
      }
      if (pick == 0) return waiting ? kBusy : x;  // else a dead end: no child, nothing untried
      x = pick;
    }
    return x;
  }

  std::size_t expand(std::size_t leaf) {
    const int value = nodes_[leaf].untried.back();
    nodes_[leaf].untried.pop_back();
    Node child;
    child.parent = leaf;
    child.depth = nodes_[leaf].depth + 1;
    child.value = value;
    const std::size_t id = nodes_.size();
    nodes_.push_back(std::move(child));
    nodes_[leaf].children.push_back(id);
    const std::vector<int> assigned = assignment(id);
    nodes_[id].untried = valid_values(assigned, used_values(assigned), nodes_[id].depth);
    if (nodes_[id].depth == n_) nodes_[id].complete = true;
    return id;
  }

  // `rollouts` random completions of the node's partial assignment (the assignment itself when it
  // is complete), leaving out those that run into a dead end.
  std::vector<std::vector<int>> completions(std::size_t node) {
    const int tries = nodes_[node].depth == n_ ? 1 : options_.rollouts;
    std::vector<std::vector<int>> made;
    for (int t = 0; t < tries; ++t) {
      std::vector<int> priorities = assignment(node);
      std::vector<std::uint8_t> used = used_values(priorities);
      bool dead = false;
      for (int group = nodes_[node].depth; group < n_ && !dead; ++group) {
        const std::vector<int> values = valid_values(priorities, used, group);
        if (values.empty()) {
          dead = true;
        } else {
          priorities[static_cast<std::size_t>(group)] = values.front();
          used[static_cast<std::size_t>(values.front())] = 1;
        }
      }
      if (!dead) made.push_back(std::move(priorities));
    }
    return made;
  }

  // Propagates a score up (each ancestor keeps the best below it) and completes ancestors whose
  // children are all complete.
  void settle(std::size_t node, double score) {
    for (std::size_t x = node;; x = nodes_[x].parent) {
      Node& n = nodes_[x];
      ++n.visits;
      n.best = std::max(n.best, score);
      if (!n.complete && n.untried.empty() && n.depth < n_) {
        n.complete =
            std::all_of(n.children.begin(), n.children.end(), [&](std::size_t c) { return nodes_[c].complete; });
      }
      if (x == 0) break;
    }
  }

  int n_;
  const std::vector<std::vector<int>>& follows_;
  const std::function<double(const std::vector<int>&)>& score_;
  const PrioritySearchOptions& options_;
  std::mt19937_64 rng_;
  std::vector<int> descendants_;  // per group, how many groups follow it (transitively)
  std::vector<Node> nodes_;
  PrioritySearchResult result_;
};

}  // namespace

PrioritySearchResult search_priorities(int groups, const std::vector<std::vector<int>>& follows,
                                       const std::function<double(const std::vector<int>&)>& score,
                                       const PrioritySearchOptions& options) {
  if (groups <= 0) throw InputError("priority search: needs at least one segment group");
  if (follows.size() != static_cast<std::size_t>(groups))
    throw InputError("priority search: one list of followed groups per group expected");
  for (int g = 0; g < groups; ++g) {
    for (int f : follows[static_cast<std::size_t>(g)]) {
      if (f < 0 || f >= g) throw InputError("priority search: group " + std::to_string(g) + " follows a later group");
    }
  }
  if (options.rollouts <= 0 || options.max_iterations <= 0 || options.batch <= 0 || options.threads <= 0)
    throw InputError("priority search: rollouts, iterations, batch and threads must be > 0");
  return Search(groups, follows, score, options).run();
}

}  // namespace weft::dip
