#include "calibration/published_collectives.hpp"

#include <catch2/catch.hpp>

#include <sstream>

#include "simulator/core/input_error.hpp"

namespace weft {
namespace {

using Catch::Matchers::Contains;

std::vector<PublishedCollective> read_runs(const std::string& text) {
  std::istringstream in(text);
  return read_published_collectives(in, "runs.csv");
}

const std::string kHeader = "cluster,gpu,nodes,gpus_per_node,collective,bytes,time_us,busbw_GBps,nvls,source\n";

TEST_CASE("published nccl-tests rows: read, grouped by run, costed by the collective model", "[suite][collectives]") {
  const auto rows = read_runs("# a comment\n" + kHeader +
                              "dgx-h100,H100,1,8,all_reduce,8589934592,40000,375.8,off,\"repo a, file\"\n"
                              "dgx-h100,H100,1,8,all_reduce,1073741824,5500,341.6,off,\"repo a, file\"\n"
                              "dgx-h100,H100,1,8,all_gather,1073741824,,359.0,off,repo b\n");
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].source == "repo a, file");
  // A row with only a bus bandwidth: nccl-tests' time = bytes x (n-1)/n / busbw.
  CHECK(rows[2].time_us == Approx(1073741824.0 * 7 / 8 / 359.0e9 * 1e6));
  const auto runs = run_published_collectives(rows);
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].sizes == 2);
  CHECK(runs[0].largest == 8589934592);
  // dgx-h100: an NCCL Simple ring over NVLink at 450 GB/s x 0.818; 14 steps of 3.4 us after 8.4 us.
  const double predicted = (8.4 + 14 * 3.4) * 1e-6 + 2.0 * 7 / 8 * 8589934592.0 / (450e9 * 0.818);
  CHECK(runs[0].largest_error == Approx(40000e-6 / predicted - 1.0));
  CHECK(runs[0].predicted_busbw_gbps == Approx(375.8 * 40000e-6 / predicted));
  CHECK(runs[1].collective == "all_gather");
}

TEST_CASE("published nccl-tests files: bad input names the line and column", "[suite][collectives][errors]") {
  CHECK_THROWS_WITH(read_runs("cluster,gpu\n"), Contains("runs.csv:1: the header has no column 'nodes'"));
  CHECK_THROWS_WITH(read_runs(kHeader), Contains("runs.csv: no measurements"));
  CHECK_THROWS_WITH(read_runs(kHeader + "dgx-h100,H100,1,8,all_reduce,big,1,1,off,s\n"),
                    Contains("runs.csv:2, column 'bytes': expected a positive number, got 'big'"));
  CHECK_THROWS_WITH(read_runs(kHeader + "dgx-h100,H100,1,8,gather,8,1,1,off,s\n"),
                    Contains("'gather' is not an nccl-tests collective"));
  CHECK_THROWS_WITH(read_runs(kHeader + "dgx-h100,H100,1,8\n"), Contains("runs.csv:2: 4 fields, the header names 10"));
  CHECK_THROWS_WITH(read_runs(kHeader + "dgx-h100,H100,1,8,all_reduce,8,,0.00,off,s\n"),
                    Contains("column 'time_us': empty, and no bus bandwidth"));
  CHECK_THROWS_WITH(read_runs(kHeader + "dgx-h100,H100,1,1,all_reduce,8,1,1,off,s\n"),
                    Contains("column 'nodes': a collective needs at least 2 GPUs"));
  CHECK_THROWS_WITH(read_runs(kHeader + "dgx-h100,H100,1,8,all_reduce,8,1,fast,off,s\n"),
                    Contains("column 'busbw_GBps': expected a positive number, got 'fast'"));
  CHECK(read_runs(kHeader + "dgx-h100,H100,1,8,all_reduce,8,30,0,off,s\n").front().busbw_gbps == 0.0);
  CHECK_THROWS_WITH(read_runs(kHeader + "dgx-h100,H100,0,8,all_reduce,8,1,1,off,s\n"),
                    Contains("column 'nodes': expected a positive number, got '0'"));
  CHECK_THROWS_WITH(run_published_collectives(read_runs(kHeader + "tpu-pod,T,1,8,all_reduce,8,1,1,off,s\n")),
                    Contains("tpu-pod"));
}

}  // namespace
}  // namespace weft
