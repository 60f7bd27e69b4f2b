#pragma once

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "simulator/core/enum_names.hpp"
#include "simulator/core/input_error.hpp"

namespace weft {

// A read-only view of one value inside a JSON document together with its path
// (`ops[3].flops`). Every accessor checks the type and throws InputError naming the path and
// what was expected, so loaders never report a bad value without saying where it is.
class JsonCursor {
 public:
  JsonCursor(const nlohmann::json& value, std::string path) : value_(&value), path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  const nlohmann::json& json() const { return *value_; }

  bool is_object() const { return value_->is_object(); }
  bool is_array() const { return value_->is_array(); }
  bool is_string() const { return value_->is_string(); }
  bool is_number() const { return value_->is_number(); }

  // Object members. `at` requires the field; `find` returns nullopt when it is absent.
  JsonCursor at(std::string_view key) const;
  std::optional<JsonCursor> find(std::string_view key) const;
  // Rejects any field not in `allowed`, naming it and listing the allowed ones.
  void expect_only(std::initializer_list<std::string_view> allowed) const;
  // The object's members in document order.
  std::vector<std::pair<std::string, JsonCursor>> members() const;

  // Array elements, each with its indexed path.
  std::vector<JsonCursor> elements() const;

  std::string as_string() const;
  bool as_bool() const;
  double as_number() const;
  double as_positive_number() const;
  double as_nonnegative_number() const;
  // Integers; an integral floating-point literal such as 1e9 is accepted.
  std::int64_t as_int() const;
  std::int64_t as_nonnegative_int() const;
  std::int64_t as_positive_int() const;
  // An integer from `min` to `max`; the error names both.
  std::int64_t as_int_in(std::int64_t min, std::int64_t max) const;
  // An integer >= 0 that fits an int.
  int as_nonnegative_int32() const;

  template <class Enum, std::size_t N>
  Enum as_enum(const EnumNames<Enum, N>& names) const {
    const std::string text = as_string();
    if (auto value = names.parse(text)) return *value;
    fail("'" + text + "' is not one of " + names.choices());
  }

  // Throws InputError("<path>: <message>").
  [[noreturn]] void fail(std::string_view message) const;

 private:
  [[noreturn]] void fail_type(std::string_view expected) const;

  const nlohmann::json* value_;
  std::string path_;
};

// Refuses (InputError) a file that would take more than half of this machine's memory to read,
// at `bytes_per_text_byte` of memory per byte of it; a file whose size is unknown passes.
void check_file_fits_memory(const std::filesystem::path& file, std::int64_t bytes_per_text_byte);

// A parsed JSON file. Syntax errors become InputError with the file name, line and column; a file
// too large to parse in memory is refused before it is read.
class JsonDocument {
 public:
  static JsonDocument parse_file(const std::filesystem::path& file);
  static JsonDocument parse_text(std::string_view text, std::string_view origin);

  JsonCursor root() const { return JsonCursor(json_, ""); }
  const std::string& origin() const { return origin_; }

 private:
  JsonDocument(nlohmann::json json, std::string origin) : json_(std::move(json)), origin_(std::move(origin)) {}

  nlohmann::json json_;
  std::string origin_;
};

}  // namespace weft
