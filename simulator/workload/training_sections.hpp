#pragma once

#include "cost_models/cluster_spec.hpp"
#include "simulator/core/json_cursor.hpp"
#include "simulator/workload/training_scenario.hpp"

namespace weft {

// A training scenario's sections as read from its file, each field checked where it stands
// (docs/scenarios.md); the checks across sections are training_scenario.cpp's.

// `parallel`: the plan's degrees, schedule and options; dp derived from the cluster when absent.
ParallelPlan read_parallel(const JsonCursor& json, const ClusterSpec& cluster);

// `training`: the batch, the sequences and their dtype.
TrainingSpec read_training(const JsonCursor& json);

// `options`: `options` holds the stack's defaults; the scenario's fields replace them.
TrainingOptions read_options(const JsonCursor& json, TrainingOptions options);

}  // namespace weft
