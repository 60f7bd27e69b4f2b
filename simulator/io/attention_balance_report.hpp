#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "simulator/workload/context_parallel/attention_balance_study.hpp"

namespace weft {

// What `weft attention` says the study was of.
struct BalanceSubject {
  std::string scenario;  // its file
  std::string layer;     // "llama3-70b's attention layer: 8 of 64 query heads, 1 of 8 key-value heads (tp 8)"
  std::string gpu;
  std::string dtype;
  // The all-gather of the whole sequence's keys and values over the CP group, per case (the same
  // under every distribution).
  std::vector<double> gather_s;
};

// The text `weft attention` prints: per case, the slowest rank's forward time under each
// distribution with its tile imbalance, then forward + backward.
std::string render_balance_report(const BalanceSubject& subject, const BalanceStudy& study,
                                  const std::vector<BalanceRow>& rows);

nlohmann::json balance_json(const BalanceSubject& subject, const BalanceStudy& study,
                            const std::vector<BalanceRow>& rows);

}  // namespace weft
