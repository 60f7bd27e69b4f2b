#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace weft {

// The bundled JSON library of named specs (`scenarios/`): GPUs, clusters, models, datasets.
// Its location is the WEFT_SCENARIOS environment variable when set, else the source tree's.
class ScenarioLibrary {
 public:
  static std::filesystem::path root();

  // The file `<root>/<folder>/<name>.json`; InputError listing the available names when absent.
  // `what` names the kind of thing in the message ("device spec", "model").
  static std::filesystem::path find(std::string_view folder, std::string_view name, std::string_view what);

  // Whether `<root>/<folder>/<name>.json` exists (`name` a plain name, no path).
  static bool contains(std::string_view folder, std::string_view name);

  // Names (file stems) of the JSON files in `<root>/<folder>`, sorted.
  static std::vector<std::string> names(std::string_view folder);
};

}  // namespace weft
