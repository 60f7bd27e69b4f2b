#include "simulator/core/spec_resolver.hpp"

#include "simulator/core/scenario_library.hpp"

namespace weft {

nlohmann::json read_library_spec(const JsonCursor& name_json, std::string_view folder, std::string_view what,
                                 std::string& file) {
  const std::string name = name_json.as_string();
  std::filesystem::path path;
  try {
    path = ScenarioLibrary::find(folder, name, what);
  } catch (const InputError& error) {
    name_json.fail(error.what());
  }
  file = path.string();
  const JsonDocument document = JsonDocument::parse_file(path);
  if (!document.root().is_object()) throw InputError(file + ": expected a JSON object");
  return document.root().json();
}

}  // namespace weft
