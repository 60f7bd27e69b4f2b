#include "tools/weft/interrupt.hpp"

#include <atomic>
#include <cstdio>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tools/weft/command_support.hpp"

namespace weft::cli {
namespace {

// Written by the signal handler, hence lock-free; 0 until a signal arrives.
std::atomic<int> received_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

std::string interrupted_command = "weft";

// Which of the two the handler catches (an ignored signal is left ignored).
volatile std::sig_atomic_t catching_int = 0;
volatile std::sig_atomic_t catching_term = 0;

// Async-signal-safe: an atomic store and sigaction only.
extern "C" void on_interrupt(int signal) {
  received_signal.store(signal, std::memory_order_relaxed);
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  if (catching_int != 0) sigaction(SIGINT, &default_action, nullptr);
  if (catching_term != 0) sigaction(SIGTERM, &default_action, nullptr);
}

// Catches `signal` unless it was ignored; `previous` gets the action that was.
void catch_signal(int signal, struct sigaction& previous, volatile std::sig_atomic_t& catching) {
  sigaction(signal, nullptr, &previous);
  if (previous.sa_handler == SIG_IGN) return;
  catching = 1;
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // reads and writes under way go on rather than fail with EINTR
  sigaction(signal, &action, nullptr);
}

}  // namespace

InterruptHandler::InterruptHandler(std::string command) {
  interrupted_command = std::move(command);
  catch_signal(SIGINT, previous_int_, catching_int);
  catch_signal(SIGTERM, previous_term_, catching_term);
}

InterruptHandler::~InterruptHandler() {
  // After a signal the default actions are in place, and stay: a second signal still ends weft.
  if (interrupt_requested()) return;
  catching_int = 0;
  catching_term = 0;
  sigaction(SIGINT, &previous_int_, nullptr);
  sigaction(SIGTERM, &previous_term_, nullptr);
}

bool interrupt_requested() { return received_signal.load(std::memory_order_relaxed) != 0; }

void throw_interrupted(std::string what, std::string hint) {
  const int signal = received_signal.load(std::memory_order_relaxed);
  throw Interrupted{signal != 0 ? signal : SIGINT, interrupted_command, std::move(what), std::move(hint)};
}

int end_interrupted(const Interrupted& stop) {
  const std::vector<std::string>& written = written_outputs();
  const std::string outputs =
      written.empty() ? "no output written" : fmt::format("only {} written", fmt::join(written, ", "));
  std::fflush(stdout);
  fmt::print(stderr, "{}: interrupted {}; {}{}{}\n", stop.command, stop.what, outputs, stop.hint.empty() ? "" : "; ",
             stop.hint);
  std::fflush(stderr);
  std::signal(stop.signal, SIG_DFL);
  std::raise(stop.signal);
  return 128 + stop.signal;
}

}  // namespace weft::cli
