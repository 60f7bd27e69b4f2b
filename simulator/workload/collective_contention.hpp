#pragma once

#include "simulator/core/units.hpp"

namespace weft {

// Compute that runs while a collective does, on one GPU. NCCL's kernels hold `collective_sms` of
// the GPU's `sms` SMs for the collective's `collective` ns (one thread block per channel, each on
// an SM of its own); the compute beside them runs on the rest, at (sms - collective_sms) / sms of
// its rate, and at its full rate once the collective is done. Over a window of compute that takes
// `compute` ns alone, the collective starting with it, the window ends
//   min(compute * c / (sms - c), collective * c / sms)
// later (c = collective_sms): all of it slowed when the collective outlasts it, else only the
// part that ran beside it. Returns the SMs that, held for the whole window, stretch it as much:
// what each of its ops is given (OpWork::reserved_sms). 0 where nothing is known or overlaps.
double averaged_collective_sms(TimeNs compute, TimeNs collective, int sms, int collective_sms);

}  // namespace weft
