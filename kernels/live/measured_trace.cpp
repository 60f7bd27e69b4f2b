#include "kernels/live/measured_trace.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "kernels/live/live_executor.hpp"
#include "simulator/core/version.hpp"

namespace weft {
namespace {

// Where each span id of a program comes from.
struct SpanSource {
  std::string name;
  std::string stream;
  OpWork work;
  std::string group;
  int peer_stage = -1;  // transfers: the pipeline stage of the other end
  bool sends = false;   // transfers: whether the span's rank is the sender
};

std::map<std::uint32_t, SpanSource> span_sources(const PlanProgram& program) {
  std::map<std::uint32_t, SpanSource> sources;
  for (const PlanAction& action : program.actions) {
    for (const PlanOp& op : action.ops) sources[op.id] = {op.name, op.stream, op.work, op.group};
    if (action.kind == ActionKind::isend || action.kind == ActionKind::irecv) {
      SpanSource source;
      source.name = action.name;
      source.stream = "transfer";
      source.work.op_class = action.kind == ActionKind::isend ? OpClass::send : OpClass::recv;
      source.work.network_bytes = action.bytes;
      source.work.shape = {action.bytes};
      source.group = "pp";
      source.peer_stage = action.peer_stage;
      source.sends = action.kind == ActionKind::isend;
      sources[kTransferSpan + action.transfer] = source;
    }
  }
  return sources;
}

double microseconds(std::int64_t ns) { return static_cast<double>(ns) / 1000.0; }

// The ranks at the other end of a transfer of `rank` (plan_transfer_peers); none for one through
// DFLOP's communicator, whose two phases join other ranks: its span is the rank's own sighting.
std::vector<int> transfer_peers(const ExecutionPlan& plan, std::size_t rank, const SpanSource& transfer) {
  const RankCoordinates c = plan.dims.coordinates_of(static_cast<std::int64_t>(rank));
  if (plan_relays(plan.dims, c.pp, transfer.peer_stage)) return {};
  return plan_transfer_peers(plan, c, transfer.peer_stage, transfer.sends);
}

// Spans by id, per rank.
using SpanIndex = std::vector<std::map<std::uint32_t, TimedSpan>>;
// Per program, the ids of its collective ops by name.
using CollectiveIndex = std::vector<std::map<std::string, std::uint32_t>>;

CollectiveIndex collective_index(const ExecutionPlan& plan) {
  CollectiveIndex index(plan.programs.size());
  for (std::size_t p = 0; p < plan.programs.size(); ++p) {
    for (const PlanAction& action : plan.programs[p].actions) {
      for (const PlanOp& op : action.ops) {
        if (is_collective_class(op.work.op_class)) index[p].emplace(op.name, op.id);
      }
    }
  }
  return index;
}

// When the last participant of a communication op launched it: the members of a collective (the
// op of the same name in each member's program), or both ends of a transfer. The simulator
// starts such an op then; a rank that launched it earlier was waiting for the others.
std::int64_t last_launch(const ExecutionPlan& plan, const SpanIndex& index, const CollectiveIndex& collectives,
                         std::size_t rank, std::uint32_t id, const SpanSource& source) {
  const RankCoordinates c = plan.dims.coordinates_of(static_cast<std::int64_t>(rank));
  std::int64_t latest = index[rank].at(id).start_ns;
  auto consider = [&](std::size_t member, std::uint32_t member_id) {
    if (member >= index.size()) return;
    const auto span = index[member].find(member_id);
    if (span != index[member].end()) latest = std::max(latest, span->second.start_ns);
  };
  if (id >= kTransferSpan) {
    for (int peer : transfer_peers(plan, rank, source)) consider(static_cast<std::size_t>(peer), id);
    return latest;
  }
  const auto kind = kCommGroupKindNames.parse(source.group);
  if (!kind || !is_collective_class(source.work.op_class)) return latest;
  for (int member : plan_group_members(plan, c, *kind)) {
    const auto& by_name = collectives[static_cast<std::size_t>(plan.program_of_rank[static_cast<std::size_t>(member)])];
    if (const auto op = by_name.find(source.name); op != by_name.end())
      consider(static_cast<std::size_t>(member), op->second);
  }
  return latest;
}

// When a transfer was over, as far as its two ends saw: a rank sees a message's end when it next
// tests or waits for it, which may be long after (a rank tests between its ops, some of them
// 100 ms long), so a send ends at the earlier of the two ends' sightings. A sender may learn
// that a large message has arrived only at its next test, while a receiver already waiting for
// it sees the end at once. A send to several receivers is over when the last of them has it.
std::int64_t send_end(const ExecutionPlan& plan, const SpanIndex& index, std::size_t rank, const TimedSpan& span,
                      const SpanSource& source) {
  const std::vector<int> peers = transfer_peers(plan, rank, source);
  if (peers.empty()) return span.end_ns;
  std::int64_t received_by_all = 0;
  for (int peer : peers) {
    const auto p = static_cast<std::size_t>(peer);
    if (p >= index.size()) return span.end_ns;
    const auto received = index[p].find(span.id);
    if (received == index[p].end()) return span.end_ns;
    received_by_all = std::max(received_by_all, received->second.end_ns);
  }
  return std::min(span.end_ns, received_by_all);
}

}  // namespace

nlohmann::json measured_trace_json(const ExecutionPlan& plan, const std::vector<std::vector<TimedSpan>>& spans,
                                   const MeasuredRunInfo& info) {
  SpanIndex index(spans.size());
  for (std::size_t rank = 0; rank < spans.size(); ++rank) {
    for (const TimedSpan& span : spans[rank]) index[rank][span.id] = span;
  }
  const CollectiveIndex collectives = collective_index(plan);
  nlohmann::json events = nlohmann::json::array();
  for (std::size_t rank = 0; rank < spans.size(); ++rank) {
    const int pid = static_cast<int>(rank) + 1;
    const RankCoordinates c = plan.dims.coordinates_of(static_cast<std::int64_t>(rank));
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", pid},
                      {"tid", 0},
                      {"args", {{"name", fmt::format("{} (rank {})", plan.dims.label_of(c), rank)}}}});
    events.push_back(
        {{"name", "process_sort_index"}, {"ph", "M"}, {"pid", pid}, {"tid", 0}, {"args", {{"sort_index", rank}}}});
    const auto sources = span_sources(plan.programs[static_cast<std::size_t>(plan.program_of_rank[rank])]);
    std::map<std::string, int> threads;
    for (const TimedSpan& span : spans[rank]) {
      const auto source = sources.find(span.id);
      if (source == sources.end()) continue;
      const SpanSource& s = source->second;
      auto [thread, added] = threads.try_emplace(s.stream, static_cast<int>(threads.size()) + 1);
      if (added) {
        events.push_back({{"name", "thread_name"},
                          {"ph", "M"},
                          {"pid", pid},
                          {"tid", thread->second},
                          {"args", {{"name", s.stream}}}});
      }
      nlohmann::json args = {{"class", kOpClassNames.name(s.work.op_class)},
                             {"dtype", kDtypeNames.name(s.work.dtype)},
                             {"flops", s.work.flops},
                             {"memory_bytes", s.work.memory_bytes},
                             {"network_bytes", s.work.network_bytes},
                             {"shape", s.work.shape}};
      if (!s.group.empty()) args["group"] = s.group;
      const bool compute = category_of(s.work.op_class) != OpCategory::communication;
      if (compute && span.busy_ns > 0 && span.busy_ns < span.end_ns - span.start_ns) {
        args["busy_us"] = microseconds(span.busy_ns);
      }
      std::int64_t start = span.start_ns;
      std::int64_t end = span.end_ns;
      if (s.work.op_class == OpClass::send) end = std::max(span.start_ns, send_end(plan, index, rank, span, s));
      if (category_of(s.work.op_class) == OpCategory::communication) {
        start = std::min(end, last_launch(plan, index, collectives, rank, span.id, s));
        args["waited_us"] = microseconds(start - span.start_ns);
      }
      events.push_back({{"name", s.name},
                        {"cat", kOpClassNames.name(s.work.op_class)},
                        {"ph", "X"},
                        {"pid", pid},
                        {"tid", thread->second},
                        {"ts", microseconds(start)},
                        {"dur", microseconds(end - start)},
                        {"args", args}});
    }
  }
  const std::int64_t traced = info.iteration_ns.at(info.traced_iteration);
  return {{"displayTimeUnit", "ns"},
          {"otherData",
           {{"generator", fmt::format("weft {} live", version())},
            {"makespan_ns", traced},
            {"measured",
             {{"backend", info.backend},
              {"device", info.device},
              {"ranks", spans.size()},
              {"warmup_iterations", info.warmup},
              {"iteration_ns", info.iteration_ns},
              {"traced_iteration", info.traced_iteration},
              {"simulated_iteration_ns", plan.simulated_iteration_ns}}}}},
          {"traceEvents", events}};
}

}  // namespace weft
