#include "simulator/io/progress_bar.hpp"

#include <unistd.h>

#include <fmt/format.h>

namespace weft {

ProgressBar::ProgressBar(std::string what) : what_(std::move(what)), enabled_(::isatty(STDERR_FILENO) == 1) {}

ProgressBar::~ProgressBar() {
  if (drawn_) fmt::print(stderr, "\r\033[K");
}

void ProgressBar::update(std::size_t done, std::size_t total) {
  if (!enabled_) return;
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  const auto now = std::chrono::steady_clock::now();
  if (done < total && drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  draw(done, total);
}

void ProgressBar::draw(std::size_t done, std::size_t total) {
  constexpr int kWidth = 30;
  const double fraction = total == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(total);
  const int filled = static_cast<int>(fraction * kWidth);
  const double elapsed = std::chrono::duration<double>(last_draw_ - start_).count();
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0;
  const double left = rate > 0 ? static_cast<double>(total - done) / rate : 0.0;
  fmt::print(stderr, "\r{} [{}{}] {}/{}, {:.1f}/s, {:.0f} s left\033[K", what_, std::string(filled, '='),
             std::string(kWidth - filled, ' '), done, total, rate, left);
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace weft
