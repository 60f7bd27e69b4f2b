#pragma once

namespace weft {

// The closed forms of checkpoint-restart under exponentially distributed failures, with mean time
// between failures `mtbf_s`, a checkpoint that stops training for `checkpoint_s` and a restart
// (with the reload) of `restart_s`.

// Young 1974: the first-order optimum interval, sqrt(2 δ M).
double young_interval_s(double checkpoint_s, double mtbf_s);

// Daly 2006 (FGCS 22, "A higher order estimate of the optimum checkpoint interval for restart
// dumps"): sqrt(2 δ M) [1 + (1/3) sqrt(δ / 2M) + (1/9) (δ / 2M)] − δ for δ < 2M, else M.
double daly_interval_s(double checkpoint_s, double mtbf_s);

// Daly's expected wall-clock time to do `work_s` of training in segments of `interval_s`, each
// followed by a checkpoint, when a failure at any time (in a segment, its checkpoint or a restart)
// loses the segment: M e^{R/M} (e^{(τ+δ)/M} − 1) T_s / τ.
double daly_expected_wall_s(double work_s, double interval_s, double checkpoint_s, double restart_s, double mtbf_s);

}  // namespace weft
