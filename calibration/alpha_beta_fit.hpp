#pragma once

#include <span>

#include "cost_models/calibrated_cost_model.hpp"

namespace weft {

struct SizeTime {
  double bytes = 0.0;
  double seconds = 0.0;
};

// The latency and per-byte time that best explain `points` (at least two sizes) in relative
// terms: least squares of (latency + bytes x per_byte - t) / t, solved with Eigen, so that small
// messages weigh as much as large ones. A negative latency is refitted as zero; a negative
// per-byte time as zero. Throws InputError with fewer than two distinct sizes.
AlphaBeta fit_alpha_beta(std::span<const SizeTime> points);

// Regimes: where a protocol switch bends the time over the size (NCCL's LL, LL128 and Simple),
// one line cannot follow the measurements. The sizes in increasing order are split into up to
// three runs of consecutive sizes (each of three sizes or more), each fitted by fit_alpha_beta,
// the split chosen that minimises the relative squared error; a split into one more regime is
// taken only where the fewer regimes miss by more than kRegimeSplitRms (root mean square of the
// relative errors: more than a bench's noise) and the split at least halves that miss. A regime
// covers sizes up to the geometric mean of its largest size and the next regime's smallest.
inline constexpr double kRegimeSplitRms = 0.05;
CommunicationFit fit_regimes(std::span<const SizeTime> points);

}  // namespace weft
