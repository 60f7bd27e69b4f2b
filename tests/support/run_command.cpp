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

CommandResult run_captured(const std::string& command_line) {
  const TempDir capture;
  const std::string command =
      command_line + " >'" + capture.file("out").string() + "' 2>'" + capture.file("err").string() + "'";
  const int status = std::system(command.c_str());
  if (status == -1 || !WIFEXITED(status)) throw std::runtime_error("could not run: " + command);
  return {WEXITSTATUS(status), read_file(capture.file("out")), read_file(capture.file("err"))};
}

// Open MPI unloads the components it does not select, and with them what LeakSanitizer needs to
// name the allocations they made. Under the sanitizers, processes that start MPI therefore record
// full stacks at each allocation (slow, so only those), which reach Open MPI's own libraries, whose
// leaks tools/lib/lsan-suppressions.txt suppresses.
std::string mpi_environment() {
  const char* asan = std::getenv("ASAN_OPTIONS");
  return asan == nullptr ? "" : std::string("ASAN_OPTIONS='") + asan + ":fast_unwind_on_malloc=0' ";
}

bool starts_mpi(const std::string& arguments) {
  return arguments.starts_with("bench") || arguments.starts_with("live");
}

}  // namespace

CommandResult run_weft(const std::string& arguments) {
  const std::string environment = starts_mpi(arguments) ? mpi_environment() : "";
  return run_captured(environment + "'" + WEFT_BINARY + "' " + arguments);
}

std::string mpi_launcher(int ranks) {
  const std::string root = ::geteuid() == 0 ? " --allow-run-as-root" : "";
  return std::string(WEFT_MPIEXEC) + root + " --oversubscribe --bind-to none -np " + std::to_string(ranks);
}

std::string weft_binary() { return WEFT_BINARY; }

CommandResult run_mpi(int ranks, const std::string& program) {
  return run_captured(mpi_environment() + "WEFT='" + WEFT_BINARY + "' " + mpi_launcher(ranks) + " " + program);
}

CommandResult run_shell(const std::string& command_line) { return run_captured(mpi_environment() + command_line); }

CommandResult run_weft_mpi(int ranks, const std::string& arguments) {
  return run_mpi(ranks, std::string("'") + WEFT_BINARY + "' " + arguments);
}

}  // namespace weft::test
