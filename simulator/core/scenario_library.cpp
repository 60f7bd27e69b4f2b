#include "simulator/core/scenario_library.hpp"

#include <algorithm>
#include <cstdlib>

#include "simulator/core/input_error.hpp"

namespace weft {

std::filesystem::path ScenarioLibrary::root() {
  if (const char* dir = std::getenv("WEFT_SCENARIOS"); dir != nullptr && *dir != '\0') return dir;
  return WEFT_SCENARIOS_DIR;
}

bool ScenarioLibrary::contains(std::string_view folder, std::string_view name) {
  const bool plain_name = !name.empty() && name.find_first_of("/\\") == std::string_view::npos && name[0] != '.';
  // Not thrown: a name the file system refuses (too long) is simply not in the library.
  std::error_code error;
  return plain_name && std::filesystem::is_regular_file(root() / folder / (std::string(name) + ".json"), error);
}

std::filesystem::path ScenarioLibrary::find(std::string_view folder, std::string_view name, std::string_view what) {
  const std::filesystem::path file = root() / folder / (std::string(name) + ".json");
  if (contains(folder, name)) return file;
  std::string known;
  for (const std::string& candidate : names(folder)) known += (known.empty() ? "" : ", ") + candidate;
  throw InputError("unknown " + std::string(what) + " '" + std::string(name) +
                   "' (known: " + (known.empty() ? "none in " + (root() / folder).string() : known) + ")");
}

std::vector<std::string> ScenarioLibrary::names(std::string_view folder) {
  std::vector<std::string> out;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(root() / folder, error)) {
    if (entry.is_regular_file(error) && entry.path().extension() == ".json")
      out.push_back(entry.path().stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace weft
