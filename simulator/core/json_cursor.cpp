#include "simulator/core/json_cursor.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "simulator/core/host_memory.hpp"

namespace weft {
namespace {

// Memory reading a document takes per byte of its text, the text's two copies included: a graph
// scenario of 300,000 ops, 60 MB of JSON, peaked at 540 MB parsed (docs/PERFORMANCE.md).
constexpr Bytes kJsonBytesPerTextByte = 10;

std::string child_path(const std::string& parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return parent + "." + std::string(key);
}

std::string describe(const nlohmann::json& value) {
  if (value.is_number_integer() || value.is_number_unsigned()) return "an integer";
  if (value.is_number_float()) return "a number";
  if (value.is_string()) return "a string";
  if (value.is_boolean()) return "a boolean";
  if (value.is_array()) return "an array";
  if (value.is_object()) return "an object";
  return "null";
}

}  // namespace

void JsonCursor::fail(std::string_view message) const {
  const std::string where = path_.empty() ? std::string("(top level)") : path_;
  throw InputError(where + ": " + std::string(message));
}

void JsonCursor::fail_type(std::string_view expected) const {
  fail("expected " + std::string(expected) + ", got " + describe(*value_));
}

JsonCursor JsonCursor::at(std::string_view key) const {
  if (auto child = find(key)) return *child;
  fail("missing required field '" + std::string(key) + "'");
}

std::optional<JsonCursor> JsonCursor::find(std::string_view key) const {
  if (!value_->is_object()) fail_type("an object");
  auto it = value_->find(key);
  if (it == value_->end()) return std::nullopt;
  return JsonCursor(*it, child_path(path_, key));
}

void JsonCursor::expect_only(std::initializer_list<std::string_view> allowed) const {
  if (!value_->is_object()) fail_type("an object");
  for (const auto& [key, value] : value_->items()) {
    bool known = false;
    for (std::string_view name : allowed) known = known || name == key;
    if (known) continue;
    std::string list;
    for (std::string_view name : allowed) list += (list.empty() ? "" : ", ") + std::string(name);
    JsonCursor(value, child_path(path_, key)).fail("unknown field (expected one of: " + list + ")");
  }
}

std::vector<std::pair<std::string, JsonCursor>> JsonCursor::members() const {
  if (!value_->is_object()) fail_type("an object");
  std::vector<std::pair<std::string, JsonCursor>> out;
  for (const auto& [key, value] : value_->items()) out.emplace_back(key, JsonCursor(value, child_path(path_, key)));
  return out;
}

std::vector<JsonCursor> JsonCursor::elements() const {
  if (!value_->is_array()) fail_type("an array");
  std::vector<JsonCursor> out;
  out.reserve(value_->size());
  for (std::size_t i = 0; i < value_->size(); ++i) {
    out.emplace_back((*value_)[i], path_ + "[" + std::to_string(i) + "]");
  }
  return out;
}

std::string JsonCursor::as_string() const {
  if (!value_->is_string()) fail_type("a string");
  return value_->get<std::string>();
}

bool JsonCursor::as_bool() const {
  if (!value_->is_boolean()) fail_type("true or false");
  return value_->get<bool>();
}

double JsonCursor::as_number() const {
  if (!value_->is_number()) fail_type("a number");
  const double value = value_->get<double>();
  if (!std::isfinite(value)) fail("expected a finite number");
  return value;
}

double JsonCursor::as_positive_number() const {
  const double value = as_number();
  if (value <= 0) fail("expected a number > 0, got " + value_->dump());
  return value;
}

double JsonCursor::as_nonnegative_number() const {
  const double value = as_number();
  if (value < 0) fail("expected a number >= 0, got " + value_->dump());
  return value;
}

std::int64_t JsonCursor::as_int() const {
  if (value_->is_number_integer()) return value_->get<std::int64_t>();
  if (value_->is_number_unsigned()) {
    const auto value = value_->get<std::uint64_t>();
    if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) fail("integer out of range");
    return static_cast<std::int64_t>(value);
  }
  if (value_->is_number_float()) {
    const double value = value_->get<double>();
    // 2^63 is exactly representable; anything at or beyond it does not fit.
    if (std::trunc(value) == value && std::abs(value) < 9.2233720368547758e18) return static_cast<std::int64_t>(value);
    fail("expected an integer, got " + value_->dump());
  }
  fail_type("an integer");
}

std::int64_t JsonCursor::as_nonnegative_int() const {
  const std::int64_t value = as_int();
  if (value < 0) fail("expected an integer >= 0, got " + std::to_string(value));
  return value;
}

std::int64_t JsonCursor::as_positive_int() const {
  const std::int64_t value = as_int();
  if (value <= 0) fail("expected an integer > 0, got " + std::to_string(value));
  return value;
}

std::int64_t JsonCursor::as_int_in(std::int64_t min, std::int64_t max) const {
  const std::int64_t value = as_int();
  if (value < min || value > max) {
    fail("expected an integer from " + std::to_string(min) + " to " + std::to_string(max) + ", got " +
         std::to_string(value));
  }
  return value;
}

int JsonCursor::as_nonnegative_int32() const { return static_cast<int>(as_int_in(0, std::numeric_limits<int>::max())); }

void check_file_fits_memory(const std::filesystem::path& file, Bytes bytes_per_text_byte) {
  std::error_code error;
  const auto size = std::filesystem::file_size(file, error);
  const Bytes limit = host_memory_bytes() / 2 / bytes_per_text_byte;
  if (error || size <= static_cast<std::uintmax_t>(limit)) return;
  throw InputError(file.string() + ": " + std::to_string(size / kBytesPerMiB) + " MiB would take about " +
                   std::to_string(size * static_cast<std::uintmax_t>(bytes_per_text_byte) / kBytesPerGiB) +
                   " GiB to read; the limit is " + std::to_string(limit / kBytesPerMiB) + " MiB (half of " +
                   host_memory_text() + ")");
}

JsonDocument JsonDocument::parse_file(const std::filesystem::path& file) {
  check_file_fits_memory(file, kJsonBytesPerTextByte);
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string() + ": cannot open file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(file.string() + ": cannot read file");
  return parse_text(text.str(), file.string());
}

JsonDocument JsonDocument::parse_text(std::string_view text, std::string_view origin) {
  try {
    return JsonDocument(nlohmann::json::parse(text), std::string(origin));
  } catch (const nlohmann::json::parse_error& error) {
    // error.byte is 1-based and points just past the offending character.
    const std::size_t offset = error.byte == 0 ? 0 : std::min<std::size_t>(error.byte - 1, text.size());
    std::size_t line = 1;
    std::size_t column = 1;
    for (std::size_t i = 0; i < offset; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string what = error.what();
    // nlohmann's text reads "[json.exception.parse_error.101] parse error at line 1, column 2: ...".
    if (auto colon = what.find(": "); colon != std::string::npos) what = what.substr(colon + 2);
    throw InputError(std::string(origin) + ":" + std::to_string(line) + ":" + std::to_string(column) +
                     ": invalid JSON: " + what);
  } catch (const nlohmann::json::out_of_range& error) {
    // A number beyond a double (1e999); nlohmann says which, not where.
    std::string what = error.what();
    if (auto bracket = what.find("] "); bracket != std::string::npos) what = what.substr(bracket + 2);
    throw InputError(std::string(origin) + ": invalid JSON: " + what);
  }
}

}  // namespace weft
