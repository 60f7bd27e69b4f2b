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

}  // namespace

CommandResult run_weft(const std::string& arguments) {
  return run_captured(std::string("'") + WEFT_BINARY + "' " + arguments);
}

CommandResult run_mpi(int ranks, const std::string& program) {
  const std::string root = ::geteuid() == 0 ? " --allow-run-as-root" : "";
  return run_captured(std::string("WEFT='") + WEFT_BINARY + "' '" + WEFT_MPIEXEC + "'" + root +
                      " --oversubscribe --bind-to none -np " + std::to_string(ranks) + " " + program);
}

CommandResult run_weft_mpi(int ranks, const std::string& arguments) {
  return run_mpi(ranks, std::string("'") + WEFT_BINARY + "' " + arguments);
}

}  // namespace weft::test
