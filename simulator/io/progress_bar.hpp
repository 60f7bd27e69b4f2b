#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>

namespace weft {

// A one-line progress report on stderr ("simulating [=====>    ] 1234/2000 plans, 85.3/s, 9 s
// left"), redrawn at most ten times a second, only when stderr is a terminal. Safe to call from
// several threads.
class ProgressBar {
 public:
  explicit ProgressBar(std::string what);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void update(std::size_t done, std::size_t total);

 private:
  void draw(std::size_t done, std::size_t total);

  std::string what_;
  bool enabled_;
  bool drawn_ = false;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace weft
