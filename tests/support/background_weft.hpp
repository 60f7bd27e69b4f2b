#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "tests/support/run_command.hpp"

namespace weft::test {

// `weft` run in the background, for tests that signal it while it works. It is started directly,
// without a shell, so that a signal reaches weft itself, with SIGINT and SIGTERM at their default
// actions whatever the test's own (a background job of a script ignores SIGINT).
class BackgroundWeft {
 public:
  explicit BackgroundWeft(const std::vector<std::string>& arguments);
  ~BackgroundWeft();  // kills weft if it still runs
  BackgroundWeft(const BackgroundWeft&) = delete;
  BackgroundWeft& operator=(const BackgroundWeft&) = delete;

  // Polls `ready` until it holds (true) or until weft ends or `timeout` passes (false).
  bool wait_until(const std::function<bool()>& ready, std::chrono::seconds timeout = std::chrono::seconds(60));
  // Whether weft has a handler for `signal` now (SigCgt of /proc/PID/status).
  bool catches(int signal) const;
  void send(int signal) const;

  struct Ended {
    int status = 0;  // as waitpid gives it
    std::string out;
    std::string err;
    std::chrono::steady_clock::duration after_signal{};  // how long weft ran after interrupt()'s signal
    bool killed_by(int signal) const;
  };
  // Waits for weft to end.
  Ended wait();
  // Sends `signal` once weft catches it, then waits for weft to end. Should weft end first, or not
  // catch it within a minute, it is killed instead (SIGKILL): a test then sees that it was not
  // ended by `signal`.
  Ended interrupt(int signal);

 private:
  bool running();

  TempDir capture_;
  pid_t pid_ = -1;
  int status_ = 0;
};

}  // namespace weft::test
