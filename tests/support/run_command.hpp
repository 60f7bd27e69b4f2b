#pragma once

#include <filesystem>
#include <string>

namespace weft::test {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `weft` with the shell-quoted `arguments`, capturing its exit code, stdout and stderr.
CommandResult run_weft(const std::string& arguments);

// Runs `weft` on `ranks` MPI ranks under mpirun (oversubscribed, unbound, so that tests may run
// side by side), capturing the output of every rank.
CommandResult run_weft_mpi(int ranks, const std::string& arguments);

// Runs the shell command `program` (which may use $WEFT) on `ranks` MPI ranks likewise.
CommandResult run_mpi(int ranks, const std::string& program);

// Runs a shell command line (a script of tools/, say), capturing likewise.
CommandResult run_shell(const std::string& command_line);
// The weft binary under test, and the mpirun prefix that starts `ranks` ranks as run_mpi does.
std::string weft_binary();
std::string mpi_launcher(int ranks);

// A fresh, empty directory under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path file(const std::string& name) const { return path_ / name; }
  // Writes `text` to `name` inside the directory and returns its path.
  std::filesystem::path write(const std::string& name, const std::string& text) const;

 private:
  std::filesystem::path path_;
};

std::string read_file(const std::filesystem::path& file);

// `path` in single quotes, as a shell word in the arguments of run_weft.
inline std::string quoted(const std::filesystem::path& path) { return "'" + path.string() + "'"; }

}  // namespace weft::test
