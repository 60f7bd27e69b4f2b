#include "tools/weft/command_support.hpp"

#include <fmt/format.h>

#include "simulator/engine/schedule_cache.hpp"

namespace weft::cli {

void add_reuse_flags(CLI::App& command, ReuseFlags& flags) {
  command.add_flag("--no-reuse", flags.no_reuse,
                   "Simulate every op of every pass instead of simulating each repeated pass once and stamping it "
                   "(same answer, slower; for checking)");
  command.add_flag("--stats", flags.stats,
                   "Print how often repeated passes were stamped from cached schedules (hits), simulated to fill the "
                   "cache (misses) or fell back to simulating every op");
}

void print_reuse_stats(const ReuseFlags& flags) {
  if (!flags.stats) return;
  const ScheduleCacheStats stats = ScheduleCache::shared().stats();
  const std::uint64_t lookups = stats.hits + stats.misses;
  fmt::print(
      "Subgraph reuse: {} hits, {} misses ({:.1f}% hit rate), {} simulations fell back to every op, {} "
      "schedules cached{}\n",
      stats.hits, stats.misses,
      lookups > 0 ? 100.0 * static_cast<double>(stats.hits) / static_cast<double>(lookups) : 0.0, stats.fallbacks,
      stats.entries, flags.no_reuse ? " (--no-reuse: none used)" : "");
}

}  // namespace weft::cli
