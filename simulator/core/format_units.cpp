#include "simulator/core/format_units.hpp"

#include <cstdlib>

#include <fmt/format.h>

namespace weft {

std::string format_duration(TimeNs ns) {
  const double value = static_cast<double>(ns);
  const TimeNs magnitude = std::llabs(ns);
  if (magnitude < 1'000) return fmt::format("{} ns", ns);
  if (magnitude < 1'000'000) return fmt::format("{:.3f} us", value / 1e3);
  if (magnitude < 1'000'000'000) return fmt::format("{:.3f} ms", value / 1e6);
  return fmt::format("{:.3f} s", value / 1e9);
}

std::string format_seconds(double seconds) { return format_duration(static_cast<TimeNs>(seconds * kNsPerSecond)); }

std::string format_bytes(Bytes bytes) {
  const double value = static_cast<double>(bytes);
  const Bytes magnitude = std::llabs(bytes);
  if (magnitude < 1024) return fmt::format("{} B", bytes);
  if (magnitude < kBytesPerMiB) return fmt::format("{:.2f} KiB", value / 1024.0);
  if (magnitude < kBytesPerGiB) return fmt::format("{:.2f} MiB", value / static_cast<double>(kBytesPerMiB));
  return fmt::format("{:.2f} GiB", value / static_cast<double>(kBytesPerGiB));
}

std::string format_percent(double fraction) { return fmt::format("{:.1f}%", fraction * 100.0); }

std::string format_trace_microseconds(TimeNs ns) {
  const char* sign = ns < 0 ? "-" : "";
  const TimeNs magnitude = std::llabs(ns);
  return fmt::format("{}{}.{:03}", sign, magnitude / 1000, magnitude % 1000);
}

std::string format_count(std::int64_t count) {
  std::string text = std::to_string(count);
  for (auto at = static_cast<std::ptrdiff_t>(text.size()) - 3; at > (text[0] == '-' ? 1 : 0); at -= 3) {
    text.insert(static_cast<std::size_t>(at), ",");
  }
  return text;
}

}  // namespace weft
