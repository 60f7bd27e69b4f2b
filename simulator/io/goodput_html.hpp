#pragma once

#include <ostream>

#include "simulator/io/goodput_report.hpp"

namespace weft {

// A self-contained HTML report of a goodput study: tokens trained over time (mean and the p5-p95
// band over seeds, against the healthy run), where the time went, and the interval search.
void write_goodput_html(std::ostream& out, const GoodputSubject& subject, const GoodputStudy& study);

}  // namespace weft
