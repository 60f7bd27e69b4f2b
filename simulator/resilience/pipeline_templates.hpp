#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "simulator/core/enum_names.hpp"

namespace weft {

// Oobleck's pipeline templates (papers/002 §2.4): how many nodes each template uses, which
// combinations of templates use a given number of nodes, and how a global batch is spread over the
// pipelines of a combination.

// §2.4.1.1: the node counts of the templates, n0, n0 + 1, ..., N − f·n0: consecutive integers from
// the fewest nodes that hold one pipeline to the most that leave f other pipelines of n0 nodes.
// With N ≥ (f + 1)·n0 and at least n0 templates, every node count from (f + 1)·n0 to N is a sum of
// theirs (Appendix A.1). Empty when N < (f + 1)·n0.
std::vector<int> template_node_counts(int n0, int nodes, int f);

// §2.4.2.1: x[i] pipelines of template i.
using TemplateCounts = std::vector<int>;

// Which templates a planner makes: all of §2.4.1.1's, n0 .. N − f·n0 (the paper's largest p), or
// the fewest that Appendix A.1's coverage needs, n0 .. 2·n0 − 1 (p = n0), searched over
// combinations of at most two of them (two_template_instantiations): what makes planning for
// thousands of nodes fast.
enum class TemplateSet : std::uint8_t { all, minimal };
inline constexpr EnumNames<TemplateSet, 2> kTemplateSetNames({"all", "minimal"});

// The node counts of `set`'s templates for `nodes` nodes (minimal: at most n0 of
// template_node_counts' first).
std::vector<int> template_node_counts(int n0, int nodes, int f, TemplateSet set);

// The combinations of at most two distinct templates that use exactly `nodes` nodes in at least
// f + 1 pipelines. With the minimal set for N nodes, every `nodes` from (f + 1)·n0 to N has one:
// q − 1 pipelines of n0 nodes and one of n0 + r, where nodes = q·n0 + r and r < n0.
std::vector<TemplateCounts> two_template_instantiations(const std::vector<int>& node_counts, int nodes, int f);

// Every combination of templates (node counts `node_counts`) that uses exactly `nodes` nodes in at
// least f + 1 pipelines, by the coin-change dynamic programme of Eq. 2.5, in the order it builds
// them. Throws InputError when there would be more than `limit`.
std::vector<TemplateCounts> feasible_instantiations(const std::vector<int>& node_counts, int nodes, int f,
                                                    std::size_t limit = 1'000'000);

// §2.4.2.2, Eq. 2.6: microbatches per pipeline of each template (pipelines of one template get the
// same number), `counts[i]` pipelines of template i taking `microbatch_s[i]` per microbatch, so
// that they add up to `microbatches` and the pipelines' times N_i·T_i vary least. nullopt when no
// integer split adds up (Oobleck then asks for another global batch); templates with no pipeline
// get 0.
std::optional<std::vector<std::int64_t>> distribute_batch(const std::vector<double>& microbatch_s,
                                                          const TemplateCounts& counts, std::int64_t microbatches);

// Eq. 2.6's objective: the sum over pipelines of (N_i·T_i − mean)².
double batch_imbalance(const std::vector<double>& microbatch_s, const TemplateCounts& counts,
                       const std::vector<std::int64_t>& per_pipeline);

}  // namespace weft
