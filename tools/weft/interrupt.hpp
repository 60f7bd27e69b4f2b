#pragma once

#include <csignal>
#include <string>

namespace weft::cli {

// Ctrl-C (SIGINT) and SIGTERM during a command that runs long. While an InterruptHandler lives,
// the first such signal only raises a flag, which the command polls between steps (a sweep's
// plans, a search's rounds), so that it can stop cleanly: leave no partial output file, keep what
// it can resume from, and say what it had done (Interrupted). The first signal also restores the
// default actions, so that a second one ends the process at once. A signal that was ignored when
// weft started (nohup, a background job of a script) stays ignored.
class InterruptHandler {
 public:
  // `command` names what is interrupted in the message: "weft sweep".
  explicit InterruptHandler(std::string command);
  ~InterruptHandler();  // puts the previous actions back
  InterruptHandler(const InterruptHandler&) = delete;
  InterruptHandler& operator=(const InterruptHandler&) = delete;

 private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
};

// Whether SIGINT or SIGTERM arrived while an InterruptHandler lived. Safe from any thread.
bool interrupt_requested();

// What a command throws once it stopped for a signal. `what` says how far it had got ("after 412
// of 1208 plans"), `hint` how to go on from there (may be empty).
struct Interrupted {
  int signal = SIGINT;
  std::string command;
  std::string what;
  std::string hint;
};

// Throws Interrupted for the signal that arrived.
[[noreturn]] void throw_interrupted(std::string what, std::string hint = {});

// For main: says on stderr what `stop`'s command had done and which outputs it wrote
// (written_outputs), then ends the process as the signal would have: killed by it, which a shell
// reports as status 128 + signal (130 for SIGINT, 143 for SIGTERM) and which stops a shell loop
// around weft too. Returns that status should the signal not end the process.
int end_interrupted(const Interrupted& stop);

}  // namespace weft::cli
