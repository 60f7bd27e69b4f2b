#pragma once

#include <cstdint>

namespace weft {

// Simulated time: integer nanoseconds, so that comparisons are exact and runs are reproducible.
using TimeNs = std::int64_t;
// Sizes of memory and of network transfers.
using Bytes = std::int64_t;

inline constexpr double kNsPerSecond = 1e9;
inline constexpr double kNsPerMicrosecond = 1e3;
inline constexpr double kSecondsPerMinute = 60.0;
inline constexpr double kSecondsPerHour = 3600.0;
inline constexpr double kSecondsPerDay = 86400.0;
inline constexpr double kBytesPerGB = 1e9;
inline constexpr Bytes kBytesPerMiB = Bytes{1} << 20;
inline constexpr Bytes kBytesPerGiB = Bytes{1} << 30;

}  // namespace weft
