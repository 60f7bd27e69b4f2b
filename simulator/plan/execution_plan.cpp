#include "simulator/plan/execution_plan.hpp"

#include <map>
#include <numeric>
#include <set>
#include <string>

#include <fmt/format.h>

#include "simulator/core/checked_math.hpp"

namespace weft {
namespace {

// More ranks than any cluster weft plans for (16,384 GPUs) by far, few enough to index with an int.
constexpr std::int64_t kMaxRanks = std::int64_t{1} << 24;

constexpr std::string_view kFormat = "weft-plan";
constexpr int kVersion = 1;

bool has_ops(ActionKind kind) {
  switch (kind) {
    case ActionKind::forward_stage:
    case ActionKind::backward_stage:
    case ActionKind::weight_stage:
    case ActionKind::recompute_stage:
    case ActionKind::compute:
    case ActionKind::collective:
      return true;
    default:
      return false;
  }
}

bool is_stage(ActionKind kind) {
  return kind == ActionKind::forward_stage || kind == ActionKind::backward_stage || kind == ActionKind::weight_stage ||
         kind == ActionKind::recompute_stage;
}

nlohmann::json op_json(const PlanOp& op) {
  nlohmann::json json = {{"id", op.id},
                         {"name", op.name},
                         {"class", kOpClassNames.name(op.work.op_class)},
                         {"dtype", kDtypeNames.name(op.work.dtype)},
                         {"shape", op.work.shape},
                         {"flops", op.work.flops},
                         {"memory_bytes", op.work.memory_bytes},
                         {"network_bytes", op.work.network_bytes},
                         {"stream", op.stream}};
  if (op.work.kernel != Kernel::any) json["kernel"] = kKernelNames.name(op.work.kernel);
  if (op.async) json["async"] = true;
  if (!op.group.empty()) json["group"] = op.group;
  if (!op.after.empty()) json["after"] = op.after;
  return json;
}

nlohmann::json action_json(const PlanAction& action) {
  nlohmann::json json = {{"action", kActionKindNames.name(action.kind)}};
  if (is_stage(action.kind)) {
    json["chunk"] = action.chunk;
    json["microbatch"] = action.microbatch;
  }
  if (has_ops(action.kind)) {
    nlohmann::json ops = nlohmann::json::array();
    for (const PlanOp& op : action.ops) ops.push_back(op_json(op));
    json["ops"] = ops;
    return json;
  }
  json["transfer"] = action.transfer;
  if (action.kind == ActionKind::isend || action.kind == ActionKind::irecv) {
    json["peer_stage"] = action.peer_stage;
    json["tag"] = action.tag;
    json["bytes"] = action.bytes;
    json["name"] = action.name;
    if (!action.relay_shares.empty()) {
      json["relay_shares"] = action.relay_shares;
      json["relay_parts"] = action.relay_parts;
    }
  }
  return json;
}

// Per pipeline stage, its own TP and DP (modules on meshes of their own).
void read_stage_meshes(const JsonCursor& stages, ParallelDims& dims) {
  const std::vector<JsonCursor> meshes = stages.elements();
  if (meshes.size() != static_cast<std::size_t>(dims.pp)) stages.fail("expected one mesh per stage (pp)");
  std::int64_t ranks = 0;
  for (const JsonCursor& mesh : meshes) {
    mesh.expect_only({"tp", "dp"});
    const PositionMesh position{static_cast<int>(mesh.at("tp").as_int_in(1, kMaxRanks)),
                                static_cast<int>(mesh.at("dp").as_int_in(1, kMaxRanks))};
    ranks = saturating_add(ranks, saturating_mul(saturating_mul(position.tp, dims.cp), position.dp));
    if (ranks > kMaxRanks) mesh.fail("the stages hold more than " + std::to_string(kMaxRanks) + " ranks");
    dims.positions.push_back(position);
  }
}

// Reads the programs' ops and actions, checking the references between them.
class ProgramReader {
 public:
  ProgramReader(const ParallelDims& dims) : dims_(dims) {}

  PlanProgram read(const JsonCursor& json) {
    json.expect_only({"label", "stage", "actions"});
    PlanProgram program;
    program.label = json.at("label").as_string();
    const JsonCursor stage = json.at("stage");
    program.stage = stage.as_nonnegative_int32();
    if (program.stage >= dims_.pp) stage.fail("expected a stage below parallel.pp = " + std::to_string(dims_.pp));
    stage_ = program.stage;
    for (const JsonCursor& action : json.at("actions").elements()) program.actions.push_back(read_action(action));
    for (const auto& [transfer, where] : launched_)
      where.second.fail("transfer " + std::to_string(transfer) + " is never waited for");
    return program;
  }

 private:
  PlanAction read_action(const JsonCursor& json) {
    PlanAction action;
    action.kind = json.at("action").as_enum(kActionKindNames);
    if (has_ops(action.kind)) {
      if (is_stage(action.kind)) {
        json.expect_only({"action", "chunk", "microbatch", "ops"});
        action.chunk = json.at("chunk").as_nonnegative_int32();
        action.microbatch = json.at("microbatch").as_nonnegative_int32();
      } else {
        json.expect_only({"action", "ops"});
      }
      const JsonCursor ops = json.at("ops");
      for (const JsonCursor& op : ops.elements()) action.ops.push_back(read_op(op));
      if (action.kind == ActionKind::collective &&
          (action.ops.size() != 1 || !is_collective_class(action.ops.front().work.op_class))) {
        ops.fail("expected one collective op");
      }
      return action;
    }
    const JsonCursor transfer = json.at("transfer");
    action.transfer = static_cast<std::uint32_t>(transfer.as_nonnegative_int());
    if (action.kind == ActionKind::isend || action.kind == ActionKind::irecv) {
      json.expect_only({"action", "transfer", "peer_stage", "tag", "bytes", "name", "relay_shares", "relay_parts"});
      const JsonCursor peer = json.at("peer_stage");
      action.peer_stage = peer.as_nonnegative_int32();
      if (action.peer_stage >= dims_.pp) peer.fail("expected a stage below parallel.pp = " + std::to_string(dims_.pp));
      action.tag = json.at("tag").as_nonnegative_int();
      action.bytes = json.at("bytes").as_nonnegative_int();  // nothing to move still orders the stages
      if (auto name = json.find("name")) action.name = name->as_string();
      read_relay_bytes(json, action);
      if (!launched_.emplace(action.transfer, std::make_pair(action.kind, transfer)).second) {
        transfer.fail("transfer id used twice");
      }
      return action;
    }
    json.expect_only({"action", "transfer"});
    const auto launch = launched_.find(action.transfer);
    const ActionKind expected = action.kind == ActionKind::wait_isend ? ActionKind::isend : ActionKind::irecv;
    if (launch == launched_.end() || launch->second.first != expected) {
      transfer.fail("no " + std::string(kActionKindNames.name(expected)) + " launched this transfer before");
    }
    launched_.erase(launch);
    return action;
  }

  // A relay's bytes per replica, both lists or neither: on a transfer between meshes of
  // different DP, one entry per replica of the sending and of the receiving mesh, each list
  // adding up to the slot (half the transfer's bytes).
  void read_relay_bytes(const JsonCursor& json, PlanAction& action) const {
    const auto shares = json.find("relay_shares");
    const auto parts = json.find("relay_parts");
    if (!shares && !parts) return;
    if (!shares || !parts) json.fail("expected relay_shares and relay_parts together");
    if (!plan_relays(dims_, stage_, action.peer_stage)) {
      shares->fail("expected only on a transfer between meshes of different DP (a relay)");
    }
    const bool sends = action.kind == ActionKind::isend;
    auto read = [&](const JsonCursor& list, int stage, std::vector<std::int64_t>& out) {
      for (const JsonCursor& x : list.elements()) out.push_back(x.as_nonnegative_int());
      const int replicas = dims_.dp_at(stage);
      if (out.size() != static_cast<std::size_t>(replicas)) {
        list.fail(
            fmt::format("expected one entry per replica of stage {} (dp {}), got {}", stage, replicas, out.size()));
      }
      const std::int64_t slot = std::accumulate(out.begin(), out.end(), std::int64_t{0});
      if (slot != action.bytes / 2) {
        list.fail(fmt::format("expected entries adding up to the slot, half the transfer's {} bytes: {}, not {}",
                              action.bytes, action.bytes / 2, slot));
      }
    };
    read(*shares, sends ? stage_ : action.peer_stage, action.relay_shares);
    read(*parts, sends ? action.peer_stage : stage_, action.relay_parts);
  }

  PlanOp read_op(const JsonCursor& json) {
    json.expect_only({"id", "name", "class", "dtype", "kernel", "shape", "flops", "memory_bytes", "network_bytes",
                      "stream", "async", "group", "after"});
    PlanOp op;
    const JsonCursor id = json.at("id");
    op.id = static_cast<std::uint32_t>(id.as_nonnegative_int());
    if (op.id != next_id_) id.fail("expected op id " + std::to_string(next_id_) + " (ids count ops in order)");
    ++next_id_;
    op.name = json.at("name").as_string();
    op.work.op_class = json.at("class").as_enum(kOpClassNames);
    op.work.dtype = json.at("dtype").as_enum(kDtypeNames);
    if (auto kernel = json.find("kernel")) op.work.kernel = read_kernel(*kernel, op.work.op_class);
    for (const JsonCursor& x : json.at("shape").elements()) op.work.shape.push_back(x.as_nonnegative_int());
    op.work.flops = json.at("flops").as_nonnegative_number();
    op.work.memory_bytes = json.at("memory_bytes").as_nonnegative_int();
    op.work.network_bytes = json.at("network_bytes").as_nonnegative_int();
    op.stream = json.at("stream").as_string();
    if (auto async = json.find("async")) op.async = async->as_bool();
    const bool communication = category_of(op.work.op_class) == OpCategory::communication;
    if (auto group = json.find("group")) {
      op.group = group->as_string();
      if (!kCommGroupKindNames.parse(op.group)) group->fail("'" + op.group + "' is not one of tp, cp, dp, embedding");
    } else if (communication) {
      json.fail("a communication op needs its group");
    }
    if (op.work.op_class == OpClass::send || op.work.op_class == OpClass::recv) {
      json.at("class").fail("point-to-point transfers are isend and irecv actions, not ops");
    }
    if (auto after = json.find("after")) {
      for (const JsonCursor& x : after->elements()) {
        const auto earlier = static_cast<std::uint32_t>(x.as_nonnegative_int());
        if (!async_ops_.contains(earlier)) x.fail("expected the id of an earlier asynchronous op");
        op.after.push_back(earlier);
      }
    }
    if (op.async) async_ops_.insert(op.id);
    return op;
  }

  const ParallelDims& dims_;
  int stage_ = 0;  // the stage of the program being read
  std::uint32_t next_id_ = 0;
  std::set<std::uint32_t> async_ops_;
  std::map<std::uint32_t, std::pair<ActionKind, JsonCursor>> launched_;
};

}  // namespace

nlohmann::json execution_plan_json(const ExecutionPlan& plan) {
  nlohmann::json programs = nlohmann::json::array();
  for (const PlanProgram& program : plan.programs) {
    nlohmann::json actions = nlohmann::json::array();
    for (const PlanAction& action : program.actions) actions.push_back(action_json(action));
    programs.push_back({{"label", program.label}, {"stage", program.stage}, {"actions", actions}});
  }
  nlohmann::json parallel = {{"tp", plan.dims.tp}, {"cp", plan.dims.cp}, {"dp", plan.dims.dp}, {"pp", plan.dims.pp}};
  if (!plan.dims.positions.empty()) {
    parallel["stages"] = nlohmann::json::array();
    for (const PositionMesh& mesh : plan.dims.positions)
      parallel["stages"].push_back({{"tp", mesh.tp}, {"dp", mesh.dp}});
  }
  nlohmann::json json = {{"format", kFormat},
                         {"version", kVersion},
                         {"description", plan.description},
                         {"parallel", parallel},
                         {"simulated_iteration_ns", plan.simulated_iteration_ns},
                         {"programs", programs},
                         {"program_of_rank", plan.program_of_rank}};
  if (plan.embedding_stage != 0) json["embedding_stage"] = plan.embedding_stage;
  return json;
}

ExecutionPlan read_execution_plan(const JsonCursor& root) {
  root.expect_only({"format", "version", "description", "parallel", "simulated_iteration_ns", "embedding_stage",
                    "programs", "program_of_rank"});
  const JsonCursor format = root.at("format");
  if (format.as_string() != kFormat)
    format.fail("expected \"" + std::string(kFormat) + "\" (weft simulate --emit-plan)");
  const JsonCursor version = root.at("version");
  if (version.as_int() != kVersion) version.fail("expected version " + std::to_string(kVersion));
  ExecutionPlan plan;
  if (auto description = root.find("description")) plan.description = description->as_string();
  const JsonCursor parallel = root.at("parallel");
  parallel.expect_only({"tp", "cp", "dp", "pp", "stages"});
  auto degree = [](const JsonCursor& mesh, const char* key) {
    return static_cast<int>(mesh.at(key).as_int_in(1, kMaxRanks));
  };
  plan.dims = {degree(parallel, "tp"), degree(parallel, "cp"), degree(parallel, "dp"), degree(parallel, "pp"), {}};
  // Multiplied saturating: four degrees in range can still overflow together.
  if (saturating_mul(saturating_mul(plan.dims.tp, plan.dims.cp), saturating_mul(plan.dims.dp, plan.dims.pp)) >
      kMaxRanks) {
    parallel.fail("tp x cp x dp x pp is more than " + std::to_string(kMaxRanks) + " ranks");
  }
  if (auto stages = parallel.find("stages")) read_stage_meshes(*stages, plan.dims);
  plan.simulated_iteration_ns = root.at("simulated_iteration_ns").as_nonnegative_int();
  if (auto stage = root.find("embedding_stage"))
    plan.embedding_stage = static_cast<int>(stage->as_int_in(0, plan.dims.pp - 1));
  for (const JsonCursor& program : root.at("programs").elements()) {
    plan.programs.push_back(ProgramReader(plan.dims).read(program));
  }
  const JsonCursor ranks = root.at("program_of_rank");
  for (const JsonCursor& rank : ranks.elements()) {
    const auto program = rank.as_nonnegative_int();
    if (program >= static_cast<std::int64_t>(plan.programs.size())) rank.fail("no such program");
    plan.program_of_rank.push_back(static_cast<int>(program));
  }
  if (plan.world_size() != plan.dims.world_size()) {
    ranks.fail("expected one program per rank of tp x cp x dp x pp = " + std::to_string(plan.dims.world_size()));
  }
  for (std::size_t r = 0; r < plan.program_of_rank.size(); ++r) {
    const int stage = plan.dims.coordinates_of(static_cast<std::int64_t>(r)).pp;
    if (plan.programs[static_cast<std::size_t>(plan.program_of_rank[r])].stage != stage) {
      ranks.elements()[r].fail("rank " + std::to_string(r) + " is in stage " + std::to_string(stage) +
                               " but its program runs another");
    }
  }
  return plan;
}

}  // namespace weft
