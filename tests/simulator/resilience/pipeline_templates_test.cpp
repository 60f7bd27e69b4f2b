#include "simulator/resilience/pipeline_templates.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <limits>
#include <random>
#include <set>

namespace weft {
namespace {

// Every x ≥ 0 with Σ x_i n_i = nodes and Σ x_i ≥ f + 1, by brute force.
std::set<TemplateCounts> brute_force_instantiations(const std::vector<int>& node_counts, int nodes, int f) {
  std::set<TemplateCounts> out;
  TemplateCounts x(node_counts.size(), 0);
  std::function<void(std::size_t, int)> visit = [&](std::size_t i, int left) {
    if (i == node_counts.size()) {
      int pipelines = 0;
      for (int count : x) pipelines += count;
      if (left == 0 && pipelines >= f + 1) out.insert(x);
      return;
    }
    for (x[i] = 0; x[i] * node_counts[i] <= left; ++x[i]) visit(i + 1, left - x[i] * node_counts[i]);
    x[i] = 0;
  };
  visit(0, nodes);
  return out;
}

TEST_CASE("Oobleck's templates span n0 to N - f n0 nodes", "[resilience][oobleck]") {
  // §2.4.1.1 with the example of Fig. 2.4: templates of 2, 3 and 4 nodes for 8 nodes and f = 2.
  CHECK(template_node_counts(2, 8, 2) == std::vector<int>{2, 3, 4});
  CHECK(template_node_counts(3, 30, 1) ==
        std::vector<int>{3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27});
  CHECK(template_node_counts(2, 5, 2).empty());  // fewer than (f + 1) n0 nodes
}

TEST_CASE("the coin-change programme finds every combination of templates", "[resilience][oobleck]") {
  // Fig. 2.7: templates of 2, 3 and 4 nodes over 7 nodes: 2 + 2 + 3 and 3 + 4.
  const auto fig = feasible_instantiations({2, 3, 4}, 7, 1);
  CHECK(std::set<TemplateCounts>(fig.begin(), fig.end()) == std::set<TemplateCounts>{{2, 1, 0}, {0, 1, 1}});
  // f = 2 needs three pipelines: only 2 + 2 + 3.
  CHECK(feasible_instantiations({2, 3, 4}, 7, 2) == std::vector<TemplateCounts>{{2, 1, 0}});
  std::mt19937 random(7);
  for (int trial = 0; trial < 40; ++trial) {
    const int n0 = 1 + static_cast<int>(random() % 4);
    const int f = static_cast<int>(random() % 3);
    const int nodes = (f + 1) * n0 + static_cast<int>(random() % 12);
    const auto counts = template_node_counts(n0, nodes, f);
    const auto found = feasible_instantiations(counts, nodes, f);
    CHECK(std::set<TemplateCounts>(found.begin(), found.end()) == brute_force_instantiations(counts, nodes, f));
    CHECK(std::set<TemplateCounts>(found.begin(), found.end()).size() == found.size());
  }
}

TEST_CASE("the minimal template set: n0 templates, searched two at a time", "[resilience][oobleck]") {
  CHECK(template_node_counts(3, 30, 1, TemplateSet::minimal) == std::vector<int>{3, 4, 5});
  CHECK(template_node_counts(3, 7, 1, TemplateSet::minimal) == std::vector<int>{3, 4});  // N − f n0 = 4
  CHECK(template_node_counts(3, 30, 1, TemplateSet::all) == template_node_counts(3, 30, 1));
  // The two-template search is the brute force's combinations of at most two templates.
  std::mt19937 random(11);
  for (int trial = 0; trial < 40; ++trial) {
    const int n0 = 1 + static_cast<int>(random() % 4);
    const int f = static_cast<int>(random() % 3);
    const int nodes = (f + 1) * n0 + static_cast<int>(random() % 14);
    const auto counts = template_node_counts(n0, nodes, f);
    std::set<TemplateCounts> at_most_two;
    for (const TemplateCounts& x : brute_force_instantiations(counts, nodes, f)) {
      if (std::count_if(x.begin(), x.end(), [](int c) { return c > 0; }) <= 2) at_most_two.insert(x);
    }
    const auto found = two_template_instantiations(counts, nodes, f);
    CHECK(std::set<TemplateCounts>(found.begin(), found.end()) == at_most_two);
    CHECK(at_most_two.size() == found.size());
  }
  // Appendix A.1's coverage with only n0 templates: every count from (f + 1) n0 to N, up to 2,048
  // nodes, has a combination of at most two of them.
  for (const auto& [n0, f] : {std::pair{16, 1}, std::pair{16, 3}, std::pair{7, 2}}) {
    const auto counts = template_node_counts(n0, 2048, f, TemplateSet::minimal);
    for (int nodes = (f + 1) * n0; nodes <= 2048; ++nodes) {
      INFO("n0 " << n0 << ", f " << f << ", " << nodes << " nodes");
      REQUIRE_FALSE(two_template_instantiations(counts, nodes, f).empty());
    }
  }
}

TEST_CASE("every surviving node count from (f + 1) n0 to N has an instantiation", "[resilience][oobleck]") {
  // Appendix A.1: consecutive templates from n0 to N − f n0 cover every such count.
  for (int n0 = 1; n0 <= 5; ++n0) {
    for (int f = 0; f <= 3; ++f) {
      for (int nodes = (f + 1) * n0; nodes <= 24; ++nodes) {
        const auto counts = template_node_counts(n0, nodes, f);
        for (int left = (f + 1) * n0; left <= nodes; ++left) {
          INFO("n0 " << n0 << ", f " << f << ", N " << nodes << ", " << left << " nodes left");
          CHECK_FALSE(feasible_instantiations(counts, left, f).empty());
        }
      }
    }
  }
}

TEST_CASE("a combination too many to list is refused", "[resilience][oobleck]") {
  CHECK_THROWS_WITH(feasible_instantiations(template_node_counts(1, 200, 0), 200, 0, 1000),
                    Catch::Matchers::Contains("more than 1000 combinations of pipeline templates use 200 nodes"));
}

// The least imbalance over every split with at least one microbatch a pipeline, by brute force.
double least_imbalance(const std::vector<double>& times, const TemplateCounts& counts, std::int64_t microbatches) {
  double least = std::numeric_limits<double>::infinity();
  std::vector<std::int64_t> split(counts.size(), 0);
  std::function<void(std::size_t, std::int64_t)> visit = [&](std::size_t j, std::int64_t left) {
    if (j == counts.size()) {
      if (left == 0) least = std::min(least, batch_imbalance(times, counts, split));
      return;
    }
    if (counts[j] == 0) {
      split[j] = 0;
      visit(j + 1, left);
      return;
    }
    for (split[j] = 1; split[j] * counts[j] <= left; ++split[j]) visit(j + 1, left - split[j] * counts[j]);
  };
  visit(0, microbatches);
  return least;
}

TEST_CASE("batch distribution keeps the global batch and balances the pipelines", "[resilience][oobleck]") {
  // By hand: a pipeline of 1 s a microbatch and one of 2 s share 6 microbatches 4 and 2: both 4 s.
  const auto even = distribute_batch({1.0, 2.0}, {1, 1}, 6);
  REQUIRE(even);
  CHECK(*even == std::vector<std::int64_t>{4, 2});
  // Two pipelines of template 0 and one of template 1 cannot split 6 with template 1 getting 1
  // and template 0 an integer... unless template 0 gets 2 (4 in all) and template 1 gets 2.
  const auto split = distribute_batch({1.0, 1.0}, {2, 1}, 6);
  REQUIRE(split);
  CHECK((*split)[0] * 2 + (*split)[1] == 6);
  CHECK(*split == std::vector<std::int64_t>{2, 2});
  // Far from the continuous optimum (19.3 each): 20 pipelines of 10 and 19 of 29, or 29 and 9.
  const auto far = distribute_batch({1.0, 1.0}, {20, 19}, 751);
  REQUIRE(far);
  CHECK((*far)[0] * 20 + (*far)[1] * 19 == 751);
  CHECK(batch_imbalance({1.0, 1.0}, {20, 19}, *far) == Approx(least_imbalance({1.0, 1.0}, {20, 19}, 751)));
  // Two pipelines of one template get the same share (Eq. 2.6 counts them by template), so an
  // odd number of microbatches does not split between them.
  CHECK_FALSE(distribute_batch({1.0, 1.0}, {2, 0}, 7));
  std::mt19937 random(11);
  std::uniform_real_distribution<double> time(0.5, 3.0);
  for (int trial = 0; trial < 60; ++trial) {
    const std::size_t templates = 1 + random() % 3;
    std::vector<double> times;
    TemplateCounts counts;
    for (std::size_t j = 0; j < templates; ++j) {
      times.push_back(time(random));
      counts.push_back(static_cast<int>(random() % 3));
    }
    if (std::all_of(counts.begin(), counts.end(), [](int x) { return x == 0; })) counts[0] = 1;
    const std::int64_t microbatches = 4 + static_cast<std::int64_t>(random() % 40);
    const auto found = distribute_batch(times, counts, microbatches);
    const double least = least_imbalance(times, counts, microbatches);
    INFO("trial " << trial);
    if (least == std::numeric_limits<double>::infinity()) {
      CHECK_FALSE(found);
      continue;
    }
    REQUIRE(found);
    std::int64_t total = 0;
    for (std::size_t j = 0; j < templates; ++j) total += (*found)[j] * counts[j];
    CHECK(total == microbatches);
    CHECK(batch_imbalance(times, counts, *found) == Approx(least).margin(1e-9));
  }
}

}  // namespace
}  // namespace weft
