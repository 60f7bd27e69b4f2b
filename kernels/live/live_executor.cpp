#include "kernels/live/live_executor.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "kernels/kernel_op.hpp"
#include "kernels/live/transfer_batches.hpp"
#include "kernels/operand_pool.hpp"
#include "simulator/core/input_error.hpp"

namespace weft {
namespace {

// The communicators an op may name, split from the world in this order on every rank.
constexpr std::array<CommGroupKind, 3> kGroupKinds = {CommGroupKind::tp, CommGroupKind::dp, CommGroupKind::embedding};

bool is_communication(const PlanOp& op) { return category_of(op.work.op_class) == OpCategory::communication; }

}  // namespace

struct LiveExecutor::State {
  const ExecutionPlan& plan;
  Backend& backend;
  Communicator& world;
  LiveOptions options;
  const PlanProgram& program;
  RankCoordinates coordinates;
  OperandPool pool;
  std::map<std::string, std::unique_ptr<Communicator>> groups;
  std::map<std::uint32_t, KernelOp> kernels;                                // compute ops by id
  std::map<std::uint32_t, Buffer> receive_buffers;                          // by span id
  std::map<std::uint32_t, std::unique_ptr<Request>> in_flight;              // by span id
  std::map<std::uint32_t, std::vector<TransferMessage>> transfer_messages;  // by transfer id
  std::map<std::uint32_t, std::string> timed;             // the spans each iteration must report, by id
  std::map<std::size_t, std::size_t> transfer_batch_end;  // by the action that starts a batch
  std::vector<std::vector<TimedSpan>> iterations;
  std::vector<std::int64_t> iteration_ns;
  std::vector<std::int64_t> issue_ns;
  std::size_t issued = 0;  // ops and transfers issued per iteration

  State(const ExecutionPlan& p, Backend& b, Communicator& w, const LiveOptions& o)
      : plan(p),
        backend(b),
        world(w),
        options(o),
        program(p.programs[static_cast<std::size_t>(p.program_of_rank[static_cast<std::size_t>(w.rank())])]),
        coordinates(p.dims.coordinates_of(w.rank())),
        pool(b) {
    for (CommGroupKind kind : kGroupKinds) {
      // A rank outside its stage's group (a middle stage and the embedding group) stays out.
      const std::vector<int> members = plan_group_members(plan, coordinates, kind);
      const bool member = std::find(members.begin(), members.end(), w.rank()) != members.end();
      auto group = world.split(member ? *std::min_element(members.begin(), members.end()) : -1, world.rank());
      if (group) groups[std::string(kCommGroupKindNames.name(kind))] = std::move(group);
    }
    std::int64_t read = 0;
    std::int64_t write = 0;
    for (const PlanAction& action : program.actions) {
      for (const PlanOp& op : action.ops) {
        ++issued;
        if (is_communication(op)) {
          const int size = group(op).size();
          const CommOp comm = comm_op(op);
          read = std::max(read, comm_send_bytes(comm, size));
          receive_buffers[op.id] = backend.allocate(std::max<std::int64_t>(1, comm_recv_bytes(comm, size)));
          if (!op.async || backend.device().times_async_work) timed[op.id] = "op '" + op.name + "'";
          continue;
        }
        const KernelOp kernel = kernel_op_for(op.work);
        read = std::max(read, kernel.read_bytes());
        write = std::max(write, kernel.write_bytes());
        kernels[op.id] = kernel;
        if (kernel.kind != KernelKind::none) timed[op.id] = "op '" + op.name + "'";
      }
      if (action.kind != ActionKind::isend && action.kind != ActionKind::irecv) continue;
      const std::vector<TransferMessage>& messages = transfer_messages[action.transfer] =
          plan_transfer_messages(plan, coordinates, action);
      // Nothing to do: a sender of more TP ranks than its receiver's mesh, a rank the
      // communicator between meshes of different DP leaves out.
      if (messages.empty()) continue;
      ++issued;
      read = std::max(read, action.bytes);
      if (std::any_of(messages.begin(), messages.end(), [](const TransferMessage& m) { return !m.sends; }))
        receive_buffers[kTransferSpan + action.transfer] = backend.allocate(std::max<std::int64_t>(1, action.bytes));
      if (backend.device().times_async_work) {
        timed[kTransferSpan + action.transfer] =
            fmt::format("transfer {} ({} stage {})", action.transfer,
                        action.kind == ActionKind::isend ? "send to" : "receive from", action.peer_stage);
      }
    }
    timed[kStartSpan] = "the iteration's start marker";
    pool.reserve(std::max<std::int64_t>(read, 1), std::max<std::int64_t>(write, 1), kTrainingOperandRotation);
    for (const auto& [first, last] : transfer_batches(program.actions)) transfer_batch_end[first] = last;
    backend.set_wait_limit(options.timeout);
  }

  Communicator& group(const PlanOp& op) {
    const auto it = groups.find(op.group);
    if (it == groups.end()) {
      throw InputError("op '" + op.name + "': no communicator '" + op.group + "' holds rank " +
                       std::to_string(world.rank()));
    }
    return *it->second;
  }

  static CommOp comm_op(const PlanOp& op) {
    CommOp comm;
    comm.op_class = op.work.op_class;
    comm.bytes = op.work.network_bytes;
    comm.dtype = op.work.dtype;
    comm.on_compute_stream = !op.async;
    return comm;
  }

  std::chrono::steady_clock::time_point deadline() const { return std::chrono::steady_clock::now() + options.timeout; }

  // Waits for an op or transfer in flight, if it still is.
  void complete(std::uint32_t span) {
    const auto it = in_flight.find(span);
    if (it == in_flight.end()) return;
    it->second->order_before_compute(deadline());
    backend.close_span(span);
    in_flight.erase(it);
  }

  // Notes what has completed meanwhile.
  void poll() {
    for (auto it = in_flight.begin(); it != in_flight.end();) {
      if (it->second->test()) {
        backend.close_span(it->first);
        it = in_flight.erase(it);
      } else {
        ++it;
      }
    }
  }

  void launch(std::uint32_t span, Communicator& comm, const CommOp& op) {
    backend.open_span(span);
    const auto receive = receive_buffers.find(span);
    std::unique_ptr<Request> request =
        comm.start(op, pool.read(), receive == receive_buffers.end() ? nullptr : receive->second.data());
    backend.issued_span(span);
    in_flight[span] = std::move(request);
  }

  void execute(const PlanOp& op) {
    // A library's error (CUDA, cuBLASLt, cuDNN, NCCL, MPI) names its call; this names the op.
    try {
      for (std::uint32_t before : op.after) complete(before);
      if (is_communication(op)) {
        launch(op.id, group(op), comm_op(op));
        if (!op.async) complete(op.id);
        return;
      }
      backend.open_span(op.id);
      run_kernel(backend, pool, kernels.at(op.id));
      backend.issued_span(op.id);
      backend.close_span(op.id);
    } catch (const InputError& error) {
      throw InputError(fmt::format("rank {}: op '{}': {}", world.rank(), op.name, error.what()));
    } catch (const std::runtime_error& error) {
      throw std::runtime_error(fmt::format("rank {}: op '{}': {}", world.rank(), op.name, error.what()));
    }
  }

  // The grouped ops of a transfer's messages of one phase.
  std::vector<GroupedOp> message_ops(const PlanAction& action, bool second_phase) {
    const auto receive = receive_buffers.find(kTransferSpan + action.transfer);
    std::vector<GroupedOp> ops;
    for (const TransferMessage& message : transfer_messages.at(action.transfer)) {
      if (message.second_phase != second_phase) continue;
      const CommOp op{.op_class = message.sends ? OpClass::send : OpClass::recv,
                      .bytes = message.bytes,
                      .peer = message.peer,
                      .tag = static_cast<int>(action.tag)};
      ops.push_back({op, pool.read(), receive == receive_buffers.end() ? nullptr : receive->second.data()});
    }
    return ops;
  }

  // Starts the transfers of actions [first, last) as one group: each one's messages of its first
  // phase. A relay's second phase starts as one group of its own once the first has completed.
  void launch_transfers(std::size_t first, std::size_t last) {
    std::vector<GroupedOp> ops;
    std::vector<std::pair<const PlanAction*, std::size_t>> launched;  // each transfer and its messages
    for (std::size_t i = first; i < last; ++i) {
      const PlanAction& action = program.actions[i];
      if (transfer_messages.at(action.transfer).empty()) continue;
      std::vector<GroupedOp> first_phase = message_ops(action, false);
      launched.emplace_back(&action, first_phase.size());
      ops.insert(ops.end(), first_phase.begin(), first_phase.end());
      backend.open_span(kTransferSpan + action.transfer);
    }
    std::vector<std::unique_ptr<Request>> requests;
    if (!ops.empty()) requests = world.start_group(ops);
    for (auto it = launched.rbegin(); it != launched.rend(); ++it)
      backend.issued_span(kTransferSpan + it->first->transfer);
    auto next = requests.begin();
    for (const auto& [action, messages] : launched) {
      std::unique_ptr<Request> request = all_of(
          {std::make_move_iterator(next), std::make_move_iterator(next + static_cast<std::ptrdiff_t>(messages))});
      next += static_cast<std::ptrdiff_t>(messages);
      std::vector<GroupedOp> second_phase = message_ops(*action, true);
      if (!second_phase.empty()) {
        const std::uint32_t span = kTransferSpan + action->transfer;
        request = then(std::move(request), [this, span, ops = std::move(second_phase)] {
          backend.open_span(span);  // the span's work goes on
          std::unique_ptr<Request> started = all_of(world.start_group(ops));
          backend.issued_span(span);
          return started;
        });
      }
      in_flight[kTransferSpan + action->transfer] = std::move(request);
    }
  }

  // A group's transfers run as one kernel on a GPU, which CUPTI attributes to one of them: the
  // others share its span.
  void share_group_spans(std::vector<TimedSpan>& spans) const {
    std::map<std::uint32_t, TimedSpan> by_id;
    for (const TimedSpan& span : spans) by_id[span.id] = span;
    for (const auto& [first, last] : transfer_batch_end) {
      const TimedSpan* shared = nullptr;
      for (std::size_t i = first; i < last && shared == nullptr; ++i) {
        const auto it = by_id.find(kTransferSpan + program.actions[i].transfer);
        if (it != by_id.end()) shared = &it->second;
      }
      if (shared == nullptr) continue;
      for (std::size_t i = first; i < last; ++i) {
        const std::uint32_t id = kTransferSpan + program.actions[i].transfer;
        if (by_id.count(id) == 0) spans.push_back({id, shared->start_ns, shared->end_ns, shared->busy_ns});
      }
    }
  }

  // A span the backend did not report would leave a hole in the measured trace that reads as an
  // op of no time.
  void expect_every_span(const std::vector<TimedSpan>& spans) const {
    std::size_t found = 0;
    for (const TimedSpan& span : spans) found += timed.count(span.id);
    if (found == timed.size()) return;
    for (const auto& [id, what] : timed) {
      const bool seen = std::any_of(spans.begin(), spans.end(), [id = id](const TimedSpan& s) { return s.id == id; });
      if (!seen) {
        throw std::runtime_error(fmt::format(
            "rank {}: {} ran but the {} backend recorded no kernel for it (span timing: {}){}", world.rank(), what,
            backend.device().backend, backend.device().timing, backend.unattributed_timing()));
      }
    }
  }

  // The iteration is timed on the spans' own clock, from when the device starts its work (a
  // one-element copy issued first marks it) to when its last op ends. Timed from the host's
  // clock, an iteration on an H100 under CUPTI also held 0.7-1.4 ms before its first kernel
  // started, after the previous iteration's synchronization and CUPTI flush, which a training
  // loop issuing ahead of the device does not have.
  void mark_start() {
    backend.open_span(kStartSpan);
    backend.memory_bound({1, 1, 1, Dtype::bf16}, pool.read(), pool.write());
    backend.issued_span(kStartSpan);
    backend.close_span(kStartSpan);
  }

  void iterate() {
    world.barrier();
    const auto issue_start = std::chrono::steady_clock::now();
    mark_start();
    for (std::size_t i = 0; i < program.actions.size(); ++i) {
      const PlanAction& action = program.actions[i];
      switch (action.kind) {
        case ActionKind::isend:
        case ActionKind::irecv: {
          const std::size_t last = transfer_batch_end.at(i);
          launch_transfers(i, last);
          i = last - 1;
          // What a launch completes (a receive whose message had arrived, a send MPI buffered)
          // is seen now, not after the stage's next op.
          poll();
          break;
        }
        case ActionKind::wait_isend:
        case ActionKind::wait_irecv:
          complete(kTransferSpan + action.transfer);
          break;
        default:
          for (const PlanOp& op : action.ops) {
            execute(op);
            poll();
          }
      }
    }
    while (!in_flight.empty()) complete(in_flight.begin()->first);
    issue_ns.push_back(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - issue_start).count());
    backend.synchronize();
    std::vector<TimedSpan> spans = backend.take_spans();
    share_group_spans(spans);
    expect_every_span(spans);
    const auto start = std::find_if(spans.begin(), spans.end(), [](const TimedSpan& s) { return s.id == kStartSpan; });
    const std::int64_t origin = start->start_ns;
    spans.erase(start);
    std::int64_t local = 0;
    for (TimedSpan& span : spans) {
      span.start_ns -= origin;
      span.end_ns -= origin;
      local = std::max(local, span.end_ns);
    }
    iterations.push_back(std::move(spans));
    iteration_ns.push_back(static_cast<std::int64_t>(world.max_host(static_cast<double>(local))));
  }
};

void LiveExecutor::check(const ExecutionPlan& plan, int ranks) {
  if (plan.world_size() != ranks) {
    throw InputError(fmt::format("the plan is for {} rank{} but {} {} running (start it with mpirun -np {})",
                                 plan.world_size(), plan.world_size() == 1 ? "" : "s", ranks, ranks == 1 ? "is" : "are",
                                 plan.world_size()));
  }
  for (const PlanProgram& program : plan.programs) {
    for (const PlanAction& action : program.actions) {
      for (const PlanOp& op : action.ops) {
        if (!is_communication(op)) kernel_op_for(op.work);
      }
    }
  }
}

LiveExecutor::LiveExecutor(const ExecutionPlan& plan, Backend& backend, Communicator& world, const LiveOptions& options)
    : state_(std::make_unique<State>(plan, backend, world, options)) {}

LiveExecutor::~LiveExecutor() = default;

LiveRun LiveExecutor::run() {
  State& s = *state_;
  for (int i = 0; i < s.options.warmup + s.options.iterations; ++i) s.iterate();
  LiveRun run;
  run.iteration_ns.assign(s.iteration_ns.begin() + s.options.warmup, s.iteration_ns.end());
  std::vector<std::size_t> order(run.iteration_ns.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return run.iteration_ns[a] < run.iteration_ns[b]; });
  run.median_iteration = order[order.size() / 2];
  const std::size_t median = static_cast<std::size_t>(s.options.warmup) + run.median_iteration;
  run.spans = s.iterations[median];
  run.issue_ns = s.issue_ns[median];
  run.issued = s.issued;
  return run;
}

}  // namespace weft
