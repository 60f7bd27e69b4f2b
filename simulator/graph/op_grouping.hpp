#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "simulator/graph/graph.hpp"
#include "simulator/graph/subgraph.hpp"

namespace weft {

// What a subgraph template is made of before it is made (Subgraph's constructor arguments); a
// whole graph is the case without ports.
struct TemplateParts {
  Graph graph;
  std::vector<TensorId> inputs;
  std::vector<TensorId> outputs;
  std::vector<Subgraph::Signal> signals;
  std::vector<Subgraph::Bundle> bundles;
};

// Templates of op groups, shared by content: groups that do the same work the same way (the
// identical layers of a model, in one pass or in the passes of other microbatch shapes) become
// one Subgraph, which the engine then simulates once per situation. Content is keyed by a 64-bit
// hash of everything a template's schedule, memory and trace depend on (its ops' work, names,
// streams, tensors, edges, ports and device specs), as the engine's schedule cache keys
// templates by hashes.
class GroupTemplates {
 public:
  // The template of content `key`, or null.
  std::shared_ptr<const Subgraph> find(std::uint64_t key) const;
  std::shared_ptr<const Subgraph> insert(std::uint64_t key, std::shared_ptr<const Subgraph> made);
  std::size_t size() const { return by_content_.size(); }

 private:
  std::unordered_map<std::uint64_t, std::shared_ptr<const Subgraph>> by_content_;
};

inline constexpr std::uint32_t kNoGroup = UINT32_MAX;

// `parts` with each group of its ops (ops with one label of `group_of_op`; kNoGroup or past the
// end: none) made one composite op of a template from `templates`, wherever that keeps the
// graph's meaning (flatten() of the result issues the same ops in the same order with the same
// dependencies):
//   - the group has two ops or more, none a collective member with ops outside it;
//   - no control edge enters or leaves it;
//   - its ops run on in_order streams and, on each, follow each other with nothing else issued
//     between the group's first op and its last op there;
//   - every tensor it touches lives on a device one of its streams runs on;
//   - no path leaves it and comes back, and the wrapped groups do not wait for each other in a
//     cycle (with a collective's members taken as one node).
// Other groups keep their ops. A group's template holds the tensors made and read only inside
// it; the tensors it reads from outside are its inputs, and those read outside, a port of
// `parts` or a bundle member, its outputs; its signals are those of `parts` among its ops. Its
// ops lose the longest prefix up to a '.' common to their names ("L3." of "L3.attn.qkv fwd"),
// which names the composite, so that identical layers have identical templates.
// `parts.graph` has no composites.
TemplateParts wrap_op_groups(const TemplateParts& parts, std::span<const std::uint32_t> group_of_op,
                             GroupTemplates& templates);

}  // namespace weft
