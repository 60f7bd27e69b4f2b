#pragma once

#include <filesystem>
#include <string>

namespace weft::test {

// Loads `html` (a self-contained page) in headless Chromium with `script` appended to its body,
// and returns the `data-result` attribute the script sets on <body>, as a JSON string. The page
// itself stays script-free; only this measuring copy runs the script. Fails the test when
// Chromium is missing or the page gives no result.
std::string measure_in_chromium(const std::string& html, const std::string& script);

}  // namespace weft::test
