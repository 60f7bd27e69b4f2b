#pragma once

#include <cstdint>
#include <optional>

#include "simulator/core/enum_names.hpp"
#include "simulator/core/json_cursor.hpp"
#include "simulator/resilience/pipeline_templates.hpp"

namespace weft {

// Synchronous checkpoints stop training while the checkpoint is written to storage; asynchronous
// ones stop it only while each GPU copies its shard to host memory, and write from there while
// training goes on (the checkpoint counts once written).
enum class CheckpointMode : std::uint8_t { sync, async };
inline constexpr EnumNames<CheckpointMode, 2> kCheckpointModeNames({"sync", "async"});

struct CheckpointPolicy {
  // Training time between checkpoints; nullopt: search for the interval with the best goodput.
  std::optional<double> interval_s;
  // Or so many iterations between checkpoints (resolved into interval_s once the iteration's time
  // is known).
  std::optional<std::int64_t> interval_iterations;
  bool enabled = true;  // false: no checkpoints ("interval_minutes": "none")
  CheckpointMode mode = CheckpointMode::sync;
  double bytes = 0.0;                 // the whole checkpoint, every rank's share
  double write_bytes_per_s = 0.0;     // storage, all writers together
  double read_bytes_per_s = 0.0;      // storage, all readers together
  double snapshot_bytes_per_s = 0.0;  // per GPU, device to host memory (async)
  // Checkpoint when a failure is announced (failures.notice_s): a write that is whole in storage
  // within the notice keeps every finished iteration. Varuna's default; checkpoint-restart's on
  // request; Oobleck and Bamboo lose at most the iteration under way anyway.
  bool on_notice = false;
};

// checkpoint-restart: after an interruption the job restarts (on hot spares in place of the nodes
// it lost, or once repairs give it enough nodes), reloads the last checkpoint written and trains
// again from there. oobleck (papers/002 §2.4-2.5): a node's failure costs the iteration under way
// and a reinstantiation of the pipelines on the nodes left; the job stops (and restarts as above)
// only for failures that take no node out, or when fewer than f + 1 pipelines are left. varuna
// (Athlur et al., EuroSys 2022): checkpoint-restart that restarts at once on the nodes left, in the
// fastest layout they hold (job morphing). bamboo (Thorpe et al., NSDI 2023): redundant computation;
// a lost stage is run by the node before it, which holds its layers; the job restarts only when
// two consecutive stages are lost.
enum class RecoveryKind : std::uint8_t { checkpoint_restart, oobleck, varuna, bamboo };
inline constexpr EnumNames<RecoveryKind, 4> kRecoveryKindNames({"checkpoint-restart", "oobleck", "varuna", "bamboo"});

struct RecoveryPolicy {
  RecoveryKind kind = RecoveryKind::checkpoint_restart;
  int fault_tolerance = 0;                   // oobleck's f
  TemplateSet templates = TemplateSet::all;  // oobleck's pipeline templates
  double reconfigure_s = 0.0;  // oobleck and bamboo: rebuilding communicators, besides copying model states
  CheckpointPolicy checkpoint;
  double restart_s = 0.0;  // rescheduling, process start and communicator setup, without the reload
  int hot_spare_nodes = 0;
  // varuna: nodes back from repair make the job morph again (a checkpoint, then a restart in the
  // fastest layout of the nodes it then has) when that layout trains faster than the one it runs.
  bool morph_on_return = false;

  // Training stops this long for each checkpoint (on `gpus` GPUs, that share it evenly).
  double checkpoint_stall_s(std::int64_t gpus) const;
  // From the checkpoint's start until it is whole in storage.
  double checkpoint_durable_s(std::int64_t gpus) const;
  double reload_s() const { return checkpoint.bytes / checkpoint.read_bytes_per_s; }
};

// Reads `recovery` of a resilience file (docs/resilience.md); `checkpoint.bytes` defaults to
// `default_checkpoint_bytes` (the scenario's parameters and optimizer states).
RecoveryPolicy load_recovery_policy(const JsonCursor& json, double default_checkpoint_bytes);

}  // namespace weft
