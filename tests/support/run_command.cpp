#include "tests/support/run_command.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace weft::test {

std::string read_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  path_ = std::filesystem::temp_directory_path() /
          ("weft-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::filesystem::path TempDir::write(const std::string& name, const std::string& text) const {
  const std::filesystem::path file = path_ / name;
  std::ofstream(file, std::ios::binary) << text;
  return file;
}

namespace {

// Open MPI unloads the components it does not select, and with them what LeakSanitizer needs to
// name the allocations they made. Under the sanitizers, processes that start MPI therefore record
// full stacks at each allocation (slow, so only those), which reach Open MPI's own libraries, whose
// leaks tools/lib/lsan-suppressions.txt suppresses.
std::string mpi_environment() {
  const char* asan = std::getenv("ASAN_OPTIONS");
  return asan == nullptr ? "" : std::string("ASAN_OPTIONS='") + asan + ":fast_unwind_on_malloc=0' ";
}

// Runs `command_line` in a shell, its output captured. A process that starts MPI gets the capture
// directory as its TMPDIR: Open MPI's session directory there is named by host and user alone, and
// two runs at once (ctest -j2) would race to create and remove the same one under /tmp.
CommandResult run_captured(const std::string& command_line, bool mpi) {
  const TempDir capture;
  const std::string environment = mpi ? mpi_environment() + "TMPDIR='" + capture.path().string() + "' " : std::string();
  const std::string command =
      environment + command_line + " >'" + capture.file("out").string() + "' 2>'" + capture.file("err").string() + "'";
  const int status = std::system(command.c_str());
  if (status == -1 || !WIFEXITED(status)) throw std::runtime_error("could not run: " + command);
  return {WEXITSTATUS(status), read_file(capture.file("out")), read_file(capture.file("err"))};
}

bool starts_mpi(const std::string& arguments) {
  return arguments.starts_with("bench") || arguments.starts_with("live");
}

}  // namespace

CommandResult run_weft(const std::string& arguments) {
  return run_captured("'" + std::string(WEFT_BINARY) + "' " + arguments, starts_mpi(arguments));
}

std::string mpi_launcher(int ranks) {
  const std::string root = ::geteuid() == 0 ? " --allow-run-as-root" : "";
  return std::string(WEFT_MPIEXEC) + root + " --oversubscribe --bind-to none -np " + std::to_string(ranks);
}

std::string weft_binary() { return WEFT_BINARY; }

CommandResult run_mpi(int ranks, const std::string& program) {
  return run_captured("WEFT='" + std::string(WEFT_BINARY) + "' " + mpi_launcher(ranks) + " " + program, true);
}

CommandResult run_shell(const std::string& command_line) { return run_captured(command_line, true); }

CommandResult run_weft_mpi(int ranks, const std::string& arguments) {
  return run_mpi(ranks, std::string("'") + WEFT_BINARY + "' " + arguments);
}

}  // namespace weft::test
