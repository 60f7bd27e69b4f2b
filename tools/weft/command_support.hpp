#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "simulator/core/input_error.hpp"

namespace weft::cli {

// Runs `fn`, prefixing any InputError with the flag or file it concerns.
template <class Fn>
auto with_context(const std::string& context, Fn&& fn) {
  try {
    return fn();
  } catch (const InputError& error) {
    throw InputError(context + ": " + error.what());
  }
}

// --no-reuse and --stats, shared by the commands that simulate.
struct ReuseFlags {
  bool no_reuse = false;
  bool stats = false;
};

void add_reuse_flags(CLI::App& command, ReuseFlags& flags);

// With --stats: how the process-wide subgraph schedule cache fared.
void print_reuse_stats(const ReuseFlags& flags);

}  // namespace weft::cli
