#pragma once

#include <string>
#include <string_view>

#include "simulator/planner/sweep.hpp"

namespace weft {

// A row of a sweep's journal (sweep_journal.hpp): one simulated plan, with all that the sweep's
// outputs show of it. Its label, its CSV cells (sweep_csv_cells, the columns of the sweep's CSV
// after `rank`), and `stages`: per pipeline stage, separated by ';', its peak memory in bytes,
// compute seconds, bubble seconds and the seconds of communication no compute hides for each
// group (tp, cp, dp, pp, embedding), separated by spaces. Numbers read back exactly.
std::string sweep_journal_columns();
std::string sweep_journal_row(const PlanOutcome& plan);  // without a line break

// A row read back: the plan's label, status, reason, stage memory and the fields of its report
// that the sweep's outputs show (iteration time, tokens/s, MFU, TFLOP/s per GPU, each stage's
// time split and peak memory); its other report fields stay zero, and its scenario empty. Throws
// InputError naming the column at fault.
PlanOutcome parse_sweep_journal_row(std::string_view row);

}  // namespace weft
