#include <exception>

#include <fmt/format.h>

#include "simulator/core/allocator_tuning.hpp"
#include "simulator/core/input_error.hpp"
#include "simulator/core/version.hpp"
#include "tools/weft/commands.hpp"
#include "tools/weft/interrupt.hpp"
#include "tools/weft/mpi_command.hpp"

int main(int argc, char** argv) {
  weft::keep_freed_memory_for_reuse();
  CLI::App app(
      "weft: simulate and plan the distributed training of large models on GPU clusters.\n"
      "Exit status: 0 success, 1 internal error, 2 bad input or usage; sweep, plan and goodput stopped by Ctrl-C or "
      "SIGTERM end as the signal does (status 130 or 143).",
      "weft");
  app.set_version_flag("--version", std::string("weft ") + std::string(weft::version()));
  app.require_subcommand(1);
  weft::cli::add_simulate_command(app);
  weft::cli::add_sweep_command(app);
  weft::cli::add_plan_command(app);
  weft::cli::add_bench_command(app);
  weft::cli::add_calibrate_command(app);
  weft::cli::add_info_command(app);
  weft::cli::add_live_command(app);
  weft::cli::add_validate_command(app);
  weft::cli::add_suite_command(app);
  weft::cli::add_goodput_command(app);
  weft::cli::add_attention_command(app);
  weft::cli::add_entrain_command(app);
  weft::cli::add_dflop_command(app);

  if (argc <= 1) {
    fmt::print(stderr, "{}", app.help());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // --help and --version end parsing as a success; a usage error reads as any other bad input.
    if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(error);
    fmt::print(stderr, "weft: error: {}\nRun with --help for more information.\n", error.what());
    return 2;
  } catch (const weft::cli::QuietExit& exit) {
    return exit.code;
  } catch (const weft::cli::Interrupted& stop) {
    return weft::cli::end_interrupted(stop);
  } catch (const weft::InputError& error) {
    fmt::print(stderr, "weft: error: {}\n", error.what());
    return 2;
  } catch (const std::exception& error) {
    fmt::print(stderr, "weft: internal error: {}\n", error.what());
    return 1;
  }
  return 0;
}
