#include "tests/support/background_weft.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <csignal>
#include <fstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace weft::test {

BackgroundWeft::BackgroundWeft(const std::vector<std::string>& arguments) {
  std::vector<std::string> words{WEFT_BINARY};
  words.insert(words.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 1, capture_.file("out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&files, 2, capture_.file("err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);
  const int error = posix_spawn(&pid_, WEFT_BINARY, &files, &attributes, argv.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&files);
  if (error != 0) throw std::runtime_error("could not start " + std::string(WEFT_BINARY));
}

BackgroundWeft::~BackgroundWeft() {
  if (pid_ > 0 && running()) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status_, 0);
  }
}

bool BackgroundWeft::running() {
  if (pid_ <= 0) return false;
  if (::waitpid(pid_, &status_, WNOHANG) == 0) return true;
  pid_ = -1;  // reaped: status_ holds how it ended
  return false;
}

bool BackgroundWeft::wait_until(const std::function<bool()>& ready, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (ready()) return true;
    if (!running()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

bool BackgroundWeft::catches(int signal) const {
  std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("SigCgt:")) return ((std::stoull(line.substr(7), nullptr, 16) >> (signal - 1)) & 1) != 0;
  }
  return false;
}

void BackgroundWeft::send(int signal) const {
  if (pid_ > 0) ::kill(pid_, signal);  // never kill(-1, ...): every process the user may signal
}

BackgroundWeft::Ended BackgroundWeft::wait() {
  if (pid_ > 0) ::waitpid(pid_, &status_, 0);
  pid_ = -1;
  return {status_, read_file(capture_.file("out")), read_file(capture_.file("err"))};
}

BackgroundWeft::Ended BackgroundWeft::interrupt(int signal) {
  const bool caught = wait_until([&] { return catches(signal); });
  send(caught ? signal : SIGKILL);
  const auto sent = std::chrono::steady_clock::now();
  Ended ended = wait();
  ended.after_signal = std::chrono::steady_clock::now() - sent;
  return ended;
}

bool BackgroundWeft::Ended::killed_by(int signal) const { return WIFSIGNALED(status) && WTERMSIG(status) == signal; }

}  // namespace weft::test
