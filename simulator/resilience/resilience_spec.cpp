#include "simulator/resilience/resilience_spec.hpp"

namespace weft {

ResilienceSpec load_resilience_spec(const JsonCursor& json, int gpus_per_node, double default_checkpoint_bytes,
                                    const std::filesystem::path& directory) {
  if (!json.is_object()) json.fail("expected a resilience file: an object of failures, recovery and run");
  json.expect_only({"description", "failures", "recovery", "run"});
  ResilienceSpec spec;
  if (auto description = json.find("description")) spec.description = description->as_string();
  spec.failures = load_failure_model(json.at("failures"), gpus_per_node, directory);
  spec.recovery = load_recovery_policy(json.at("recovery"), default_checkpoint_bytes);
  if (auto run = json.find("run")) {
    run->expect_only({"days", "seeds", "first_seed", "tokens"});
    if (auto days = run->find("days")) {
      spec.days = days->as_positive_number();
      if (spec.days > kMaxRunDays) days->fail("expected at most 36500 days (a century)");
    }
    if (auto seeds = run->find("seeds")) spec.seeds = static_cast<int>(seeds->as_int_in(1, kMaxSeeds));
    if (auto first = run->find("first_seed")) spec.first_seed = static_cast<std::uint64_t>(first->as_nonnegative_int());
    if (auto tokens = run->find("tokens")) spec.tokens = tokens->as_positive_number();
  }
  return spec;
}

}  // namespace weft
