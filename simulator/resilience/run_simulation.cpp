#include "simulator/resilience/run_simulation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "simulator/core/random_stream.hpp"
#include "simulator/resilience/bamboo_stages.hpp"
#include "simulator/resilience/node_pool.hpp"
#include "simulator/resilience/pipeline_reinstantiation.hpp"
#include "simulator/resilience/planned_stops.hpp"
#include "simulator/resilience/slowdown_timeline.hpp"

namespace weft {
namespace {

constexpr double kNoEvent = std::numeric_limits<double>::infinity();

// What the job is doing; training progresses only while it computes.
enum class Phase : std::uint8_t { compute, checkpoint, restart, waiting, reconfigure, maintenance };

// What a whole checkpoint written out of turn is for: Varuna's restart on more nodes (a morph), or
// a planned stop.
enum class Stop : std::uint8_t { none, morph, maintenance };

class RunSimulator {
 public:
  RunSimulator(const RunSetup& setup, std::uint64_t seed)
      : setup_(setup),
        random_(seed),
        slowdowns_(setup.failures, setup.slowdown_rates, setup.job_nodes, seed),
        planned_(setup.failures, setup.job_nodes, seed),
        pool_(setup.job_nodes, setup.recovery.hot_spare_nodes),
        failure_rate_(setup.failures.rate_per_s(pool_.size())),
        checkpoint_work_(setup.recovery.checkpoint.enabled ? setup.checkpoint_work_s() : kNoEvent),
        target_work_(setup.target_work_s().value_or(kNoEvent)),
        stall_s_(setup.recovery.checkpoint_stall_s(setup.job_gpus)),
        durable_after_s_(setup.recovery.checkpoint_durable_s(setup.job_gpus)),
        restart_s_(setup.recovery.restart_s + setup.recovery.reload_s()) {
    for (const FailureCause& cause : setup.failures.causes) cause_rate_total_ += cause.rate_per_node_s;
    outcome_.timeline.reserve(static_cast<std::size_t>(setup.timeline_points));
    if (setup.oobleck) adopt(*setup.oobleck->best(static_cast<int>(setup.job_nodes)));
    if (setup.bamboo) {
      bamboo_stages_.emplace(*setup.bamboo);
      const int pipelines = static_cast<int>(setup.job_nodes) / setup.bamboo->nodes_per_pipeline();
      healthy_samples_per_s_ = static_cast<double>(setup.bamboo->samples(pipelines)) / setup.iteration_s;
      bamboo_adopt(pipelines);
    }
  }

  RunOutcome run() {
    next_failure_ = random_.exponential(failure_rate_);
    next_boundary_ = checkpoint_work_;
    while (true) {
      const double phase_end = phase_end_time();
      const double next =
          std::min({next_failure_, phase_end, pool_.next_repair(), write_durable_at_, next_trace_event(),
                    slowdowns_.next_event(), planned_.next_event(), setup_.horizon_s});
      advance_to(next);
      if (outcome_.reached_target || next == setup_.horizon_s) break;
      if (next == slowdowns_.next_event()) {
        slowdowns_.handle_next_event();
      } else if (next == planned_.next_event()) {
        stop_as_planned(planned_.take_next());
      } else if (next == write_durable_at_) {
        write_durable();
      } else if (next == pool_.next_repair()) {
        repair();
      } else if (next == phase_end) {
        end_phase();
      } else if (next == next_trace_event()) {
        replay_trace_event();
      } else {
        fail();
        next_failure_ = now_ + random_.exponential(failure_rate_);
      }
    }
    outcome_.wall_s = now_;
    outcome_.trained_s = work_;
    sample_timeline_to(setup_.horizon_s, work_, 0.0);
    return std::move(outcome_);
  }

 private:
  double phase_end_time() const {
    if (phase_ == Phase::compute) return now_ + (std::min(next_boundary_, target_work_) - work_) / pace();
    if (phase_ == Phase::waiting) return kNoEvent;
    return phase_end_;
  }

  // Training time of the healthy run done per second of computing: the layout's rate, slowed by
  // the slowdowns under way.
  double pace() const { return rate_ * slowdowns_.rate(); }

  // Moves the clock to `time`, charging the time to the current phase.
  void advance_to(double time) {
    const double elapsed = time - now_;
    sample_timeline_to(time, work_, phase_ == Phase::compute ? pace() : 0.0);
    switch (phase_) {
      case Phase::compute:
        // Exact at the phase's end: no rounding may leave the work a hair short of its boundary.
        work_ = time == phase_end_time() ? std::min(next_boundary_, target_work_) : work_ + elapsed * pace();
        outcome_.degraded_s += elapsed * (1.0 - pace());
        break;
      case Phase::reconfigure:
        outcome_.reconfigure_s += elapsed;
        break;
      case Phase::checkpoint:
        outcome_.checkpoint_s += elapsed;
        break;
      case Phase::restart:
        outcome_.restart_s += elapsed;
        break;
      case Phase::waiting:
        outcome_.waiting_s += elapsed;
        break;
      case Phase::maintenance:
        outcome_.maintenance_s += elapsed;
        break;
    }
    now_ = time;
  }

  // Records the progress at the timeline's sample times up to `time`, the work growing at `rate`
  // from now.
  void sample_timeline_to(double time, double work, double rate) {
    const int points = setup_.timeline_points;
    while (static_cast<int>(outcome_.timeline.size()) < points) {
      const auto k = static_cast<int>(outcome_.timeline.size()) + 1;
      // The last sample is the horizon itself, whatever the rounding of the others.
      const double at = k == points ? setup_.horizon_s : setup_.horizon_s * k / points;
      if (at > time) break;
      outcome_.timeline.push_back(work + rate * (at - now_));
    }
  }

  void end_phase() {
    switch (phase_) {
      case Phase::compute:  // at a checkpoint boundary, or trained
        if (work_ >= target_work_ && !setup_.recovery.checkpoint.enabled) {
          outcome_.reached_target = true;
          break;
        }
        phase_ = Phase::checkpoint;
        // A snapshot waits for the previous checkpoint's write to finish with its host memory;
        // the trained model's checkpoint is waited for until it is written.
        phase_end_ = std::max(now_, write_durable_at_ == kNoEvent ? now_ : write_durable_at_) +
                     (work_ >= target_work_ ? durable_after_s_ : stall_s_);
        break;
      case Phase::checkpoint:
        if (stop_after_checkpoint_ != Stop::none) {
          durable_work_ = work_;
          ++outcome_.checkpoints;
          next_boundary_ = work_ + checkpoint_work_;
          if (std::exchange(stop_after_checkpoint_, Stop::none) == Stop::morph) {
            pool_.fill_job();  // nodes back while it wrote
            start_restart();
          } else {
            start_maintenance();
          }
          break;
        }
        if (work_ >= target_work_) {
          durable_work_ = work_;
          ++outcome_.checkpoints;
          outcome_.reached_target = true;
          break;  // trained and saved: the run ends here
        }
        if (setup_.recovery.checkpoint.mode == CheckpointMode::sync) {
          durable_work_ = work_;
          ++outcome_.checkpoints;
        } else {
          writing_work_ = work_;
          write_durable_at_ = now_ - stall_s_ + durable_after_s_;
        }
        next_boundary_ = work_ + checkpoint_work_;
        resume_compute();
        break;
      case Phase::restart:
      case Phase::reconfigure:
        resume_compute();
        break;
      case Phase::maintenance:
        stop_job();
        break;
      case Phase::waiting:
        break;
    }
  }

  void resume_compute() {
    phase_ = Phase::compute;
    if (pending_maintenance_s_) {
      stop_as_planned(*std::exchange(pending_maintenance_s_, std::nullopt));
      return;
    }
    if (setup_.oobleck) join_repaired_nodes();
    if (setup_.bamboo) bamboo_grow();
    if (setup_.varuna && setup_.recovery.morph_on_return) varuna_grow();
  }

  // Oobleck takes in the nodes back from repair as soon as it computes (§2.3): it instantiates
  // pipelines for the nodes it now has, the iteration under way lost.
  void join_repaired_nodes() {
    const std::int64_t before = pool_.job_size();
    pool_.fill_job();
    if (pool_.job_size() == before) return;
    const auto& plan = setup_.oobleck->best(static_cast<int>(pool_.job_size()));
    if (!plan) return;
    drop_iteration_under_way();
    reconfigure(*plan);
  }

  void write_durable() {
    durable_work_ = writing_work_;
    write_durable_at_ = kNoEvent;
    ++outcome_.checkpoints;
  }

  void repair() {
    pool_.repair_next();
    if (phase_ == Phase::waiting && job_can_run()) {
      start_restart();
    } else if (setup_.oobleck && phase_ == Phase::compute) {
      join_repaired_nodes();
    } else if (setup_.bamboo && phase_ == Phase::compute) {
      bamboo_grow();
    } else if (setup_.varuna && setup_.recovery.morph_on_return && phase_ == Phase::compute) {
      varuna_grow();
    }
  }

  // Varuna morphs when its nodes change (papers/002 §2.7.3: "frequent changes in node availability
  // trigger Varuna's full reconfiguration"): nodes back from repair join the job, and when the
  // fastest layout of the nodes it then has trains faster than the one it runs, the job drops the
  // iteration under way, checkpoints, and restarts in that layout.
  void varuna_grow() {
    pool_.fill_job();
    const auto& layout = setup_.varuna->best(static_cast<int>(pool_.job_size()));
    if (!layout || varuna_rate(*layout) <= rate_) return;
    drop_iteration_under_way();
    ++outcome_.reconfigurations;
    checkpoint_then(Stop::morph);
  }

  // A planned stop (failures.planned): the job drops the iteration under way, writes a whole
  // checkpoint, stops for the maintenance's downtime, and restarts. One that comes while the job
  // does not compute waits until it does; stops that wait together are done together, in the
  // longest one's downtime.
  void stop_as_planned(double downtime_s) {
    if (phase_ != Phase::compute) {
      pending_maintenance_s_ = std::max(pending_maintenance_s_.value_or(0.0), downtime_s);
      return;
    }
    drop_iteration_under_way();
    ++outcome_.planned_stops;
    maintenance_s_ = downtime_s;
    if (work_ == durable_work_ && write_durable_at_ == kNoEvent) {
      start_maintenance();  // nothing to save: it computed nothing since its checkpoint or reload
    } else {
      checkpoint_then(Stop::maintenance);
    }
  }

  void start_maintenance() {
    phase_ = Phase::maintenance;
    phase_end_ = now_ + maintenance_s_;
  }

  // Writes a whole checkpoint, once the one being written is, then stops as `stop` says.
  void checkpoint_then(Stop stop) {
    stop_after_checkpoint_ = stop;
    phase_ = Phase::checkpoint;
    phase_end_ = std::max(now_, write_durable_at_ == kNoEvent ? now_ : write_durable_at_) + durable_after_s_;
  }

  // A Varuna layout's training rate against its layout on every node of the job.
  double varuna_rate(const MorphedLayout& layout) const {
    return layout.samples_per_s() / setup_.varuna->best(static_cast<int>(setup_.job_nodes))->samples_per_s();
  }

  // Moves healthy idle nodes into the job; true when it has enough to run: every node it needs
  // under checkpoint-restart, (f + 1) n0 under Oobleck, a layout's under Varuna, a pipeline's under
  // Bamboo.
  bool job_can_run() {
    const bool complete = pool_.fill_job();
    if (setup_.varuna) return pool_.job_size() >= setup_.varuna->min_nodes();
    if (setup_.bamboo) {
      const auto pipelines = static_cast<int>(pool_.job_size() / setup_.bamboo->nodes_per_pipeline());
      return setup_.bamboo->samples_per_s(pipelines, {}).has_value();
    }
    if (!setup_.oobleck) return complete;
    return pool_.job_size() >= (setup_.oobleck->f() + 1) * setup_.oobleck->n0();
  }

  const FailureCause& draw_cause() { return cause_at(setup_.failures.causes, random_.uniform() * cause_rate_total_); }

  // A failure of a node drawn over the whole pool: one of a node out for repair, or of the
  // software on a node outside the running job, does not happen (thinning keeps the rate per node
  // in service exact).
  void fail() {
    const FailureCause& cause = draw_cause();
    const auto node =
        std::min(static_cast<std::int64_t>(random_.uniform() * static_cast<double>(pool_.size())), pool_.size() - 1);
    if (!pool_.healthy(node)) return;
    if (cause.blast_radius == BlastRadius::none) {
      if (job_running() && pool_.in_job(node)) interrupt();
      return;
    }
    std::int64_t first = node;
    std::int64_t last = node + 1;
    if (cause.blast_radius == BlastRadius::rack) {
      const std::int64_t rack_nodes = setup_.failures.rack_nodes;
      first = node / rack_nodes * rack_nodes;
      last = std::min(first + rack_nodes, pool_.size());
    }
    int job_nodes_hit = 0;
    for (std::int64_t hit = first; hit < last; ++hit) {
      if (!pool_.healthy(hit)) continue;
      const double repair_s =
          cause.repair == RepairDistribution::fixed ? cause.repair_s : random_.exponential(1.0 / cause.repair_s);
      job_nodes_hit += pool_.take_out(hit, now_ + repair_s) ? 1 : 0;
    }
    job_lost_nodes(job_nodes_hit);
  }

  // The trace's next event: its nodes drawn among the healthy ones.
  void replay_trace_event() {
    const TraceEvent& event = setup_.failures.trace[next_trace_++];
    std::vector<std::int64_t> healthy;
    for (std::int64_t node = 0; node < pool_.size(); ++node) {
      if (pool_.healthy(node)) healthy.push_back(node);
    }
    int job_nodes_hit = 0;
    for (int i = 0; i < event.nodes && !healthy.empty(); ++i) {
      const auto pick = std::min(static_cast<std::size_t>(random_.uniform() * static_cast<double>(healthy.size())),
                                 healthy.size() - 1);
      job_nodes_hit += pool_.take_out(healthy[pick], now_ + event.down_s) ? 1 : 0;
      healthy[pick] = healthy.back();
      healthy.pop_back();
    }
    job_lost_nodes(job_nodes_hit);
  }

  double next_trace_event() const {
    const auto& trace = setup_.failures.trace;
    return next_trace_ < trace.size() ? trace[next_trace_].at_s : kNoEvent;
  }

  // The running job lost `nodes` of its nodes.
  void job_lost_nodes(int nodes) {
    if (nodes == 0 || !job_running()) return;
    if (setup_.oobleck && phase_ != Phase::restart) {
      lose_nodes(nodes);
    } else if (setup_.bamboo && phase_ != Phase::restart) {
      bamboo_lose(nodes);
    } else {
      if (saves_on_notice()) save_on_notice();
      interrupt();
    }
  }

  // A job that checkpoints when told of a preemption (Varuna; papers/002 §2.7.2 counts as
  // "fallbacks" the checkpoints that do not finish within the grace period): when the whole write
  // fits in the notice, the job keeps every iteration it finished and loses only the one under
  // way; otherwise it falls back to its last checkpoint.
  bool saves_on_notice() const {
    return setup_.recovery.checkpoint.on_notice && setup_.failures.notice_s > 0.0 && phase_ != Phase::restart &&
           durable_after_s_ <= setup_.failures.notice_s;
  }

  void save_on_notice() {
    drop_iteration_under_way();
    durable_work_ = work_;
    ++outcome_.checkpoints;
  }

  // Whether the job's processes are up: not while it waits for nodes or is stopped for maintenance.
  bool job_running() const { return phase_ != Phase::waiting && phase_ != Phase::maintenance; }

  // A failure cuts short the checkpoint being written: a planned stop it was for waits until the
  // job computes again.
  void abandon_checkpoint() {
    write_durable_at_ = kNoEvent;
    if (std::exchange(stop_after_checkpoint_, Stop::none) == Stop::maintenance) {
      pending_maintenance_s_ = std::max(pending_maintenance_s_.value_or(0.0), maintenance_s_);
      --outcome_.planned_stops;
    }
  }

  // The job stops: the training since the last checkpoint written is lost, and a checkpoint
  // still being written is abandoned.
  void interrupt() {
    ++outcome_.interruptions;
    outcome_.lost_s += work_ - durable_work_;
    work_ = durable_work_;
    abandon_checkpoint();
    next_boundary_ = work_ + checkpoint_work_;
    stop_job();
  }

  // The job stops: it restarts once it has the nodes to run on.
  void stop_job() {
    if (job_can_run()) {
      start_restart();
    } else {
      phase_ = Phase::waiting;
    }
  }

  void start_restart() {
    if (setup_.varuna) {
      const auto& layout = setup_.varuna->best(static_cast<int>(pool_.job_size()));
      if (!layout) {
        phase_ = Phase::waiting;
        return;
      }
      rate_ = varuna_rate(*layout);
    }
    if (setup_.bamboo) bamboo_adopt(static_cast<int>(pool_.job_size() / setup_.bamboo->nodes_per_pipeline()));
    if (setup_.oobleck) {
      const auto& plan = setup_.oobleck->best(static_cast<int>(pool_.job_size()));
      if (!plan) {
        phase_ = Phase::waiting;
        return;
      }
      adopt(*plan);
    }
    phase_ = Phase::restart;
    phase_end_ = now_ + restart_s_;
  }

  // Oobleck (§2.5): the iteration under way is lost, the pipelines that lost `lost` nodes are
  // reinstantiated and the batch redistributed; with fewer than f + 1 pipelines left the job
  // stores its progress and stops.
  void lose_nodes(int lost) {
    drop_iteration_under_way();
    abandon_checkpoint();  // the lost nodes' shares of a checkpoint being written
    const std::vector<int> lost_per_pipeline = draw_pipelines_hit(pipelines_, lost, random_);
    OobleckPlanner& planner = *setup_.oobleck;
    const Reinstantiation rebuilt = reinstantiate(pipelines_, lost_per_pipeline, planner.n0(), planner.f());
    const OobleckConfiguration* plan = nullptr;
    if (rebuilt.feasible) {
      const auto& redistributed = planner.redistribute(rebuilt.pipelines);
      const auto& fresh = planner.best(static_cast<int>(pool_.job_size()));
      plan = redistributed ? &*redistributed : fresh ? &*fresh : nullptr;
    }
    if (plan) {
      reconfigure(*plan);
      return;
    }
    ++outcome_.interruptions;
    durable_work_ = work_;
    stop_job();
  }

  // Oobleck loses at most the iteration under way (§2.7.4).
  void drop_iteration_under_way() {
    const double done = std::floor(work_ / setup_.iteration_s + 1e-9) * setup_.iteration_s;
    const double partial = std::max(0.0, work_ - done);
    outcome_.lost_s += partial;
    work_ -= partial;
  }

  void adopt(const OobleckConfiguration& plan) {
    pipelines_ = plan.pipelines;
    rate_ = setup_.iteration_s / plan.iteration_s;
  }

  // Rebuilding the pipelines: the constant part, then each node of the smallest pipeline fetching
  // its share of the model states from the other replicas.
  void reconfigure(const OobleckConfiguration& plan) {
    adopt(plan);
    ++outcome_.reconfigurations;
    const double smallest = *std::min_element(plan.pipelines.begin(), plan.pipelines.end());
    phase_ = Phase::reconfigure;
    phase_end_ =
        now_ + setup_.recovery.reconfigure_s + setup_.recovery.checkpoint.bytes / smallest / setup_.node_bytes_per_s;
  }

  // Bamboo (its NSDI 2023 paper, §4.3-4.4, as Oobleck's evaluation runs it): each failed node's
  // stage is taken over by the node before it, which holds its layers, at the cost of the
  // iteration under way and a pause; losing a stage next to one already lost (the node covering two
  // stages, or the one holding the lost stage's copy) is fatal: the job restarts from its
  // checkpoint. Nodes no pipeline uses fail harmlessly.
  void bamboo_lose(int lost) {
    std::int64_t nodes = pool_.job_size() + lost;  // the job's, before the failure
    bool hit = false;
    for (int i = 0; i < lost; ++i, --nodes) {
      const std::int64_t pick =
          std::min(static_cast<std::int64_t>(random_.uniform() * static_cast<double>(nodes)), nodes - 1);
      const BambooStages::Loss loss = bamboo_stages_->lose_node(pick);
      if (loss == BambooStages::Loss::fatal) {
        interrupt();
        return;
      }
      hit = hit || loss == BambooStages::Loss::covered;
    }
    if (!hit) return;
    drop_iteration_under_way();
    abandon_checkpoint();  // the lost nodes' shares of a checkpoint being written
    if (!bamboo_pace()) {
      ++outcome_.interruptions;
      durable_work_ = work_;
      stop_job();
      return;
    }
    ++outcome_.reconfigurations;
    phase_ = Phase::reconfigure;
    phase_end_ = now_ + setup_.recovery.reconfigure_s;
  }

  // Every stage of `pipelines` pipelines on nodes of its own.
  void bamboo_adopt(int pipelines) {
    bamboo_stages_->reset(pipelines);
    bamboo_pace();
  }

  // The job trains at the pace of its slowest pipeline; false when its pipelines do not run.
  bool bamboo_pace() {
    const std::optional<double> slowest = bamboo_stages_->samples_per_s();
    if (slowest) rate_ = *slowest / healthy_samples_per_s_;
    return slowest.has_value();
  }

  // Nodes back from repair wait as standby until they make one more pipeline: then Bamboo rebuilds
  // every pipeline on the nodes it has (the iteration under way lost), each new node fetching its
  // stage's and its successor's model states.
  void bamboo_grow() {
    pool_.fill_job();
    const BambooPlanner& planner = *setup_.bamboo;
    const auto pipelines = static_cast<int>(pool_.job_size() / planner.nodes_per_pipeline());
    if (pipelines <= bamboo_stages_->pipelines()) return;
    drop_iteration_under_way();
    bamboo_adopt(pipelines);
    ++outcome_.reconfigurations;
    phase_ = Phase::reconfigure;
    phase_end_ =
        now_ + setup_.recovery.reconfigure_s +
        2.0 * setup_.recovery.checkpoint.bytes / (planner.pp() * planner.nodes_per_stage()) / setup_.node_bytes_per_s;
  }

  const RunSetup& setup_;
  RandomStream random_;
  SlowdownTimeline slowdowns_;
  PlannedStops planned_;
  NodePool pool_;
  double failure_rate_;
  double cause_rate_total_ = 0.0;
  double checkpoint_work_;
  double target_work_;
  double stall_s_;
  double durable_after_s_;
  double restart_s_;

  double now_ = 0.0;
  Phase phase_ = Phase::compute;
  double rate_ = 1.0;           // training time of the healthy run done per second, unslowed
  std::vector<int> pipelines_;  // Oobleck's, node counts
  std::optional<BambooStages> bamboo_stages_;
  double healthy_samples_per_s_ = 0.0;           // Bamboo's, on every node
  double phase_end_ = kNoEvent;                  // checkpoint and restart phases
  Stop stop_after_checkpoint_ = Stop::none;      // what the checkpoint being written is for
  double maintenance_s_ = 0.0;                   // the downtime of the planned stop under way
  std::optional<double> pending_maintenance_s_;  // a planned stop waiting for the job to compute
  double work_ = 0.0;                            // training time whose progress stands
  double durable_work_ = 0.0;                    // as of the last checkpoint written
  double next_boundary_ = kNoEvent;
  double writing_work_ = 0.0;           // an asynchronous checkpoint being written...
  double write_durable_at_ = kNoEvent;  // ...and when it will be whole
  double next_failure_ = kNoEvent;
  std::size_t next_trace_ = 0;
  RunOutcome outcome_;
};

}  // namespace

double RunSetup::checkpoint_work_s() const {
  const double interval = recovery.checkpoint.interval_s.value_or(iteration_s);
  return std::max(1.0, std::round(interval / iteration_s)) * iteration_s;
}

std::optional<double> RunSetup::target_work_s() const {
  if (!target_tokens) return std::nullopt;
  return std::ceil(*target_tokens / tokens_per_iteration) * iteration_s;
}

RunOutcome simulate_run(const RunSetup& setup, std::uint64_t seed) { return RunSimulator(setup, seed).run(); }

}  // namespace weft
