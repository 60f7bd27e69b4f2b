#pragma once

#include <string>

namespace weft::test {

// A cluster of `ranks` CPU ranks on one node (a device of kind cpu named "test-cpu"), as weft
// bench --cluster-spec writes one, with round capacities.
std::string test_cpu_cluster(int ranks = 2);

// A training scenario of a tiny GPT (2 layers of hidden 128, vocabulary 1024, 64 tokens per
// sample, 4 samples an iteration) on `cluster` (a JSON value) with the plan `parallel` (a JSON
// object): small enough that weft live runs an iteration on two CPU ranks in a fraction of a
// second.
std::string tiny_gpt_scenario(const std::string& parallel, const std::string& cluster = test_cpu_cluster());

// The same language model (4 layers) fed by a 2-layer ViT of hidden 128 (16 tokens per image, 2
// images a sample) through an MLP projector, and, with `audio`, a 2-layer audio encoder of the
// same width (8 tokens per second, 2 seconds a sample) through its own: a model of several
// modules as small.
std::string tiny_vlm_scenario(const std::string& parallel, const std::string& cluster = test_cpu_cluster(),
                              bool audio = false);

}  // namespace weft::test
