#include "simulator/io/atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "simulator/core/input_error.hpp"

namespace weft {

void check_output_path(const std::filesystem::path& file) {
  if (file.empty()) throw InputError("empty output file name");
  const std::filesystem::path directory = file.parent_path().empty() ? "." : file.parent_path();
  std::error_code error;
  if (!std::filesystem::is_directory(directory, error)) {
    throw InputError("cannot write '" + file.string() + "': directory '" + directory.string() + "' does not exist");
  }
  if (std::filesystem::is_directory(file, error)) {
    throw InputError("cannot write '" + file.string() + "': it is a directory");
  }
}

void write_file_atomically(const std::filesystem::path& file, const std::function<void(std::ostream&)>& write) {
  check_output_path(file);
  std::filesystem::path temporary = file;
  temporary += ".tmp." + std::to_string(::getpid());
  try {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError("cannot write '" + file.string() + "': " + std::strerror(errno));
    write(out);
    out.flush();
    if (!out) throw InputError("cannot write '" + file.string() + "': " + std::strerror(errno));
    out.close();
    std::filesystem::rename(temporary, file);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw;
  }
}

}  // namespace weft
