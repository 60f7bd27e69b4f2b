#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "simulator/resilience/goodput_study.hpp"

namespace weft {

// What a goodput report says the study was of.
struct GoodputSubject {
  std::string scenario;     // its file
  std::string resilience;   // the resilience file
  std::string description;  // the resilience file's own
  std::string failure_source;
};

// "45 s", "4.3 min", "3.09 h", "2.5 days".
std::string format_span(double seconds);

// The text `weft goodput` prints: the healthy run, the failure model, the checkpoint interval
// against Young's and Daly's, and the study's goodput and lost time with their spread over seeds.
std::string render_goodput_report(const GoodputSubject& subject, const GoodputStudy& study);

nlohmann::json goodput_json(const GoodputSubject& subject, const GoodputStudy& study);

// One row per seed (docs/resilience.md lists the columns).
void write_goodput_csv(std::ostream& out, const GoodputStudy& study);

}  // namespace weft
