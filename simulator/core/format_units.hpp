// Times, sizes and fractions as weft prints them: in reports, error messages and traces.
#pragma once

#include <cstdint>
#include <string>

#include "simulator/core/units.hpp"

namespace weft {

// "812 ns", "4.210 us", "12.345 ms", "1.203 s".
std::string format_duration(TimeNs ns);
// Seconds as format_duration shows them (rounded to the nanosecond).
std::string format_seconds(double seconds);
// "512 B", "3.00 KiB", "1.50 MiB", "79.65 GiB".
std::string format_bytes(Bytes bytes);
// "2,147,483,648".
std::string format_count(std::int64_t count);
// "87.3%".
std::string format_percent(double fraction);
// Nanoseconds as microseconds with exactly three decimals, as Chrome traces want: "1234.567".
std::string format_trace_microseconds(TimeNs ns);

}  // namespace weft
