#pragma once

#include <vector>

namespace weft {

// What repeated timings of one op say: the median (what calibration fits) and the spread.
struct SampleStats {
  double median = 0.0;
  double min = 0.0;
  double max = 0.0;
  double p25 = 0.0;
  double p75 = 0.0;

  // Interquartile range relative to the median.
  double relative_spread() const { return median > 0.0 ? (p75 - p25) / median : 0.0; }
};

// Quantiles by linear interpolation between order statistics; `samples` must not be empty.
SampleStats sample_stats(std::vector<double> samples);

}  // namespace weft
