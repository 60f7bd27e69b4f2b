#include "simulator/resilience/recovery_policy.hpp"

#include "simulator/core/units.hpp"

#include <string>

namespace weft {
namespace {

CheckpointPolicy load_checkpoint(const JsonCursor& json, double default_bytes) {
  json.expect_only({"interval_minutes", "interval_iterations", "mode", "bytes", "write_GBps", "read_GBps",
                    "snapshot_GBps_per_gpu", "on_notice"});
  CheckpointPolicy out;
  const auto iterations = json.find("interval_iterations");
  const auto minutes = json.find("interval_minutes");
  if (iterations.has_value() == minutes.has_value())
    json.fail("expected one of interval_minutes or interval_iterations");
  const JsonCursor interval = minutes ? *minutes : *iterations;
  if (iterations) {
    out.interval_iterations = iterations->as_int_in(1, std::int64_t{1} << 40);
  } else if (interval.is_string()) {
    const std::string text = interval.as_string();
    if (text == "none") {
      out.enabled = false;
    } else if (text != "auto") {
      interval.fail("'" + text + "' is not a number of minutes, auto (the best interval found) or none");
    }
  } else {
    out.interval_s = interval.as_positive_number() * kSecondsPerMinute;
  }
  if (auto mode = json.find("mode")) out.mode = mode->as_enum(kCheckpointModeNames);
  out.bytes = default_bytes;
  if (auto bytes = json.find("bytes")) out.bytes = bytes->as_positive_number();
  out.write_bytes_per_s = json.at("write_GBps").as_positive_number() * kBytesPerGB;
  out.read_bytes_per_s = json.at("read_GBps").as_positive_number() * kBytesPerGB;
  const auto snapshot = json.find("snapshot_GBps_per_gpu");
  if (out.mode == CheckpointMode::async) {
    if (!snapshot) json.fail("expected snapshot_GBps_per_gpu: how fast each GPU copies its shard to host memory");
    out.snapshot_bytes_per_s = snapshot->as_positive_number() * kBytesPerGB;
  } else if (snapshot) {
    snapshot->fail("applies to asynchronous checkpoints (mode async) only");
  }
  return out;
}

}  // namespace

double RecoveryPolicy::checkpoint_stall_s(std::int64_t gpus) const {
  if (checkpoint.mode == CheckpointMode::sync) return checkpoint.bytes / checkpoint.write_bytes_per_s;
  return checkpoint.bytes / static_cast<double>(gpus) / checkpoint.snapshot_bytes_per_s;
}

double RecoveryPolicy::checkpoint_durable_s(std::int64_t gpus) const {
  if (checkpoint.mode == CheckpointMode::sync) return checkpoint_stall_s(gpus);
  return checkpoint_stall_s(gpus) + checkpoint.bytes / checkpoint.write_bytes_per_s;
}

RecoveryPolicy load_recovery_policy(const JsonCursor& json, double default_checkpoint_bytes) {
  json.expect_only({"policy", "checkpoint", "restart_minutes", "hot_spare_nodes", "fault_tolerance",
                    "reconfigure_seconds", "templates", "morph_on_return"});
  RecoveryPolicy out;
  out.kind = json.at("policy").as_enum(kRecoveryKindNames);
  out.checkpoint = load_checkpoint(json.at("checkpoint"), default_checkpoint_bytes);
  out.restart_s = json.at("restart_minutes").as_nonnegative_number() * kSecondsPerMinute;
  if (auto spares = json.find("hot_spare_nodes")) out.hot_spare_nodes = static_cast<int>(spares->as_int_in(0, 1 << 20));
  const auto f = json.find("fault_tolerance");
  const auto reconfigure = json.find("reconfigure_seconds");
  const auto templates = json.find("templates");
  const bool rebuilds = out.kind == RecoveryKind::oobleck || out.kind == RecoveryKind::bamboo;
  if (rebuilds) {
    if (!reconfigure) {
      json.fail("expected reconfigure_seconds: " + std::string(kRecoveryKindNames.name(out.kind)) +
                "'s pipeline rebuild, besides copying model states");
    }
    out.reconfigure_s = reconfigure->as_nonnegative_number();
  } else if (reconfigure) {
    reconfigure->fail("applies to the oobleck and bamboo policies only");
  }
  if (out.kind == RecoveryKind::oobleck) {
    if (!f) json.fail("expected fault_tolerance: the simultaneous pipeline failures oobleck tolerates (its f)");
    out.fault_tolerance = static_cast<int>(f->as_int_in(0, 1024));
    if (templates) out.templates = templates->as_enum(kTemplateSetNames);
  } else {
    if (f) f->fail("applies to the oobleck policy only");
    if (templates) templates->fail("applies to the oobleck policy only");
  }
  const auto on_notice = json.at("checkpoint").find("on_notice");
  out.checkpoint.on_notice = on_notice ? on_notice->as_bool() : out.kind == RecoveryKind::varuna;
  if (on_notice && rebuilds) {
    on_notice->fail("applies to the checkpoint-restart and varuna policies only: " +
                    std::string(kRecoveryKindNames.name(out.kind)) + " loses at most the iteration under way");
  }
  const auto morph = json.find("morph_on_return");
  out.morph_on_return = morph ? morph->as_bool() : out.kind == RecoveryKind::varuna;
  if (morph && out.kind != RecoveryKind::varuna) morph->fail("applies to the varuna policy only");
  if (out.kind != RecoveryKind::checkpoint_restart && out.hot_spare_nodes > 0) {
    json.at("hot_spare_nodes")
        .fail(std::string(kRecoveryKindNames.name(out.kind)) + " trains on every healthy node: it keeps no spare idle");
  }
  return out;
}

}  // namespace weft
