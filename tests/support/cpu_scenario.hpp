#pragma once

#include <string>

namespace weft::test {

// A cluster of two CPU ranks (a device of kind cpu named "test-cpu"), as weft bench
// --cluster-spec writes one, with round capacities.
std::string test_cpu_cluster();

// A training scenario of a tiny GPT (2 layers of hidden 128, vocabulary 1024, 64 tokens per
// sample, 4 samples an iteration) on `cluster` (a JSON value) with the plan `parallel` (a JSON
// object): small enough that weft live runs an iteration on two CPU ranks in a fraction of a
// second.
std::string tiny_gpt_scenario(const std::string& parallel, const std::string& cluster = test_cpu_cluster());

}  // namespace weft::test
