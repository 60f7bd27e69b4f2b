#include "tests/support/chromium.hpp"

#include <catch2/catch.hpp>

#include "tests/support/run_command.hpp"

namespace weft::test {
namespace {

constexpr const char* kChromium = "/usr/bin/chromium";

std::string unescape_attribute(std::string text) {
  const std::pair<const char*, const char*> entities[] = {
      {"&quot;", "\""}, {"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}};
  for (const auto& [entity, plain] : entities) {
    for (std::size_t at = text.find(entity); at != std::string::npos; at = text.find(entity, at + 1)) {
      text.replace(at, std::string(entity).size(), plain);
    }
  }
  return text;
}

}  // namespace

std::string measure_in_chromium(const std::string& html, const std::string& script) {
  REQUIRE(std::filesystem::exists(kChromium));  // Debian package chromium, installed by tools/test.sh
  const TempDir dir;
  std::string page = html;
  const std::size_t body_end = page.rfind("</body>");
  REQUIRE(body_end != std::string::npos);
  page.insert(body_end, "<script>" + script + "</script>");
  const auto file = dir.write("page.html", page);
  const std::string command = std::string(kChromium) +
                              " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
                              " --disable-background-networking --disable-component-update --disable-sync"
                              " --user-data-dir='" +
                              dir.file("profile").string() +
                              "' --window-size=1200,2000 --virtual-time-budget=2000 --dump-dom 'file://" +
                              file.string() + "' >'" + dir.file("dom").string() + "' 2>/dev/null";
  REQUIRE(std::system(command.c_str()) == 0);
  const std::string dom = read_file(dir.file("dom"));
  const std::string marker = "data-result=\"";
  const std::size_t begin = dom.find(marker);
  REQUIRE(begin != std::string::npos);
  const std::size_t end = dom.find('"', begin + marker.size());
  REQUIRE(end != std::string::npos);
  return unescape_attribute(dom.substr(begin + marker.size(), end - begin - marker.size()));
}

}  // namespace weft::test
