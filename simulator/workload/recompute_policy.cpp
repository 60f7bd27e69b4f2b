#include "simulator/workload/recompute_policy.hpp"

#include <array>
#include <charconv>
#include <utility>

#include <fmt/format.h>

namespace weft {

std::string describe(const LayerRecompute& pick) {
  switch (pick.method) {
    case LayerRecompute::Method::first:
      return pick.count == 1 ? "the first layer of each chunk"
                             : fmt::format("the first {} layers of each chunk", pick.count);
    case LayerRecompute::Method::every: {
      if (pick.count == 1) return "every layer";
      static constexpr std::array<const char*, 4> kSuffixes{"th", "st", "nd", "rd"};
      const int last_digit = pick.count % 10;
      const bool teen = pick.count % 100 / 10 == 1;
      const char* suffix = teen || last_digit > 3 ? "th" : kSuffixes[static_cast<std::size_t>(last_digit)];
      return fmt::format("every {}{} layer of each rank", pick.count, suffix);
    }
    case LayerRecompute::Method::uniform:
      return pick.count == 1 ? "every layer" : fmt::format("every layer, in groups of {} of each chunk", pick.count);
    case LayerRecompute::Method::all:
      break;
  }
  return "every layer";
}

std::string recompute_name(const RecomputeChoice& choice) {
  std::string name(kRecomputePolicyNames.name(choice.policy));
  switch (choice.layers.method) {
    case LayerRecompute::Method::first:
      return name + "/first" + std::to_string(choice.layers.count);
    case LayerRecompute::Method::every:
      return name + "/every" + std::to_string(choice.layers.count);
    case LayerRecompute::Method::uniform:
      return name + "/uniform" + std::to_string(choice.layers.count);
    case LayerRecompute::Method::all:
      break;
  }
  return name;
}

std::optional<RecomputeChoice> parse_recompute_choice(std::string_view text) {
  const std::size_t slash = text.find('/');
  const auto policy = kRecomputePolicyNames.parse(text.substr(0, slash));
  if (!policy) return std::nullopt;
  if (slash == std::string_view::npos) return RecomputeChoice{.policy = *policy, .layers = {}};
  if (*policy != RecomputePolicy::full) return std::nullopt;
  const std::string_view pick = text.substr(slash + 1);
  for (auto [prefix, method] : {std::pair{std::string_view("first"), LayerRecompute::Method::first},
                                std::pair{std::string_view("every"), LayerRecompute::Method::every},
                                std::pair{std::string_view("uniform"), LayerRecompute::Method::uniform}}) {
    if (!pick.starts_with(prefix)) continue;
    const std::string_view digits = pick.substr(prefix.size());
    int count = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
    if (error != std::errc() || end != digits.data() + digits.size() || count < 1 || count > 100'000) {
      return std::nullopt;
    }
    return RecomputeChoice{.policy = *policy, .layers = {.method = method, .count = count}};
  }
  return std::nullopt;
}

}  // namespace weft
