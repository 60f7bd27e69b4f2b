#pragma once

#include <CLI/CLI.hpp>

namespace weft::cli {

// Each adds its subcommand to `app`; the subcommand's callback does the work when it is chosen.
// Callbacks throw InputError for bad input (exit 2); anything else is an internal error (exit 1).
void add_simulate_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
void add_live_command(CLI::App& app);
void add_validate_command(CLI::App& app);
void add_suite_command(CLI::App& app);
void add_goodput_command(CLI::App& app);
void add_attention_command(CLI::App& app);
void add_dflop_command(CLI::App& app);
void add_entrain_command(CLI::App& app);

}  // namespace weft::cli
