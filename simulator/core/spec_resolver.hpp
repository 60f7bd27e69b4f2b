#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "simulator/core/json_cursor.hpp"

namespace weft {

// Reads a spec that a scenario gives in one of three forms:
//   "h100-sxm"                              a name from the bundled library (<folder>/<name>.json)
//   {"name": ..., ...}                      the whole spec inline
//   {"base": "dgx-h100", "gpus": 512}       a library spec with some fields replaced
// `parse` reads the final JSON object. Errors in a library file name that file; errors in the
// scenario's own fields name their JSON path in the scenario.
template <class Spec>
Spec load_spec(const JsonCursor& json, std::string_view folder, std::string_view what,
               const std::function<Spec(const JsonCursor&)>& parse);

// Implementation detail of load_spec, shared by every spec type.
nlohmann::json read_library_spec(const JsonCursor& name_json, std::string_view folder, std::string_view what,
                                 std::string& file);

template <class Spec>
Spec load_spec(const JsonCursor& json, std::string_view folder, std::string_view what,
               const std::function<Spec(const JsonCursor&)>& parse) {
  if (json.is_string()) {
    std::string file;
    const nlohmann::json spec = read_library_spec(json, folder, what, file);
    try {
      return parse(JsonCursor(spec, ""));
    } catch (const InputError& error) {
      throw InputError(file + ": " + error.what());
    }
  }
  if (!json.is_object()) json.fail("expected a " + std::string(what) + " name or object");
  const auto base = json.find("base");
  if (!base) return parse(json);
  std::string file;
  nlohmann::json merged = read_library_spec(*base, folder, what, file);
  try {
    parse(JsonCursor(merged, ""));  // the library file alone must be valid
  } catch (const InputError& error) {
    throw InputError(file + ": " + error.what());
  }
  for (const auto& [key, value] : json.json().items()) {
    if (key != "base") merged[key] = value;
  }
  return parse(JsonCursor(merged, json.path()));
}

}  // namespace weft
