#pragma once

#include <filesystem>
#include <functional>
#include <ostream>

namespace weft {

// Throws InputError if `file` cannot be created because its directory is missing or is not a
// directory; lets commands fail before doing long work whose output could not be saved.
void check_output_path(const std::filesystem::path& file);

// Writes `file` through a temporary file in the same directory, renamed over it only when
// `write` returned and the stream reported no error: readers never see a partial file, and a
// failure leaves any previous file untouched. Throws InputError when the file cannot be written.
void write_file_atomically(const std::filesystem::path& file, const std::function<void(std::ostream&)>& write);

}  // namespace weft
