#pragma once

#include <istream>
#include <string>
#include <vector>

#include "simulator/core/op_class.hpp"
#include "simulator/core/units.hpp"

namespace weft {

// One message size of a published nccl-tests run (scenarios/validation/nccl-tests.csv): the run's
// system, mapped onto a bundled cluster, its collective, and the out-of-place time nccl-tests
// printed. Sizes follow nccl-tests, as weft's collective model does.
struct PublishedCollective {
  std::string cluster;  // the bundled cluster whose GPUs, NVLink and NICs the system has
  std::string gpu;      // as the source names it
  int nodes = 1;
  int gpus_per_node = 1;
  OpClass op_class = OpClass::allreduce;  // send for nccl-tests' sendrecv
  std::string collective;                 // as nccl-tests names it
  Bytes bytes = 0;
  double time_us = 0.0;
  double busbw_gbps = 0.0;
  std::string nvls;  // what the source says of NVLink SHARP ("off": costed without it; "on", ...)
  std::string source;
};

// One run: the sizes of one collective on one system from one source, and weft's errors on it.
struct CollectiveRunResult {
  std::string cluster;
  std::string collective;
  int nodes = 1;
  int gpus_per_node = 1;
  std::string nvls;
  std::string source;
  int sizes = 0;
  Bytes largest = 0;
  double measured_busbw_gbps = 0.0;   // at the largest size
  double predicted_busbw_gbps = 0.0;  // at the largest size
  // weft's throughput over the measured one, minus one (positive: weft predicts faster), at the
  // largest size, and the median of its absolute value over every size.
  double largest_error = 0.0;
  double median_abs_error = 0.0;
};

// Reads the CSV (a header line naming the columns cluster, gpu, nodes, gpus_per_node, collective,
// bytes, time_us, busbw_GBps, nvls, source; lines starting with '#' are comments). Errors name the
// file's line and column and exit 2 (InputError).
std::vector<PublishedCollective> read_published_collectives(std::istream& in, const std::string& name);

// Groups the rows by run and costs each size by weft's collective model on the run's cluster.
std::vector<CollectiveRunResult> run_published_collectives(const std::vector<PublishedCollective>& rows);

}  // namespace weft
