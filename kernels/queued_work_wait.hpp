#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace weft {

// Work a device has queued, waited for without trusting it to finish: a peer that died leaves a
// GPU's collective spinning forever, and a plain device synchronisation with it.
class QueuedWork {
 public:
  virtual ~QueuedWork() = default;
  virtual bool done() = 0;
  // The error a communicator reported asynchronously; empty while there is none.
  virtual std::string failure() = 0;
  // What is still under way, for the error: the oldest unfinished communication op, say.
  virtual std::string pending() = 0;
  // Gives the work up (aborts the communicators), so that the process can report and exit.
  virtual void abandon() = 0;
};

// The wait's clock and what it does between polls; tests give it a clock of their own.
struct WaitClock {
  std::function<std::chrono::steady_clock::time_point()> now;
  std::function<void()> pause;
};
// The steady clock, yielding the core between polls (a sleep would add its granularity to every
// measured iteration).
WaitClock steady_wait_clock();

// Polls `work` until it is done. A failure, or `deadline` passing first, abandons the work and
// throws std::runtime_error saying which, and what was pending.
void wait_for(QueuedWork& work, std::chrono::steady_clock::time_point deadline, const WaitClock& clock);

}  // namespace weft
