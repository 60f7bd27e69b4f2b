#include "simulator/resilience/node_pool.hpp"

#include <catch2/catch.hpp>

namespace weft {
namespace {

TEST_CASE("a node pool replaces a job's failed nodes with spares, then with repaired nodes", "[resilience]") {
  NodePool pool(3, 1);  // nodes 0-2 in the job, node 3 spare
  CHECK(pool.size() == 4);
  CHECK(pool.job_complete());
  CHECK(pool.in_job(0));
  CHECK_FALSE(pool.in_job(3));
  CHECK(pool.take_out(1, 100.0));  // a job node
  CHECK_FALSE(pool.job_complete());
  CHECK(pool.fill_job());  // the spare steps in
  CHECK(pool.in_job(3));
  CHECK(pool.take_out(2, 50.0));
  CHECK_FALSE(pool.fill_job());  // no spare left
  CHECK(pool.next_repair() == 50.0);
  pool.repair_next();  // node 2 comes back first
  CHECK(pool.healthy(2));
  CHECK_FALSE(pool.healthy(1));
  CHECK(pool.fill_job());
  CHECK(pool.next_repair() == 100.0);
  pool.repair_next();
  CHECK(pool.healthy(1));
  CHECK_FALSE(pool.in_job(1));           // idle: the job is complete
  CHECK_FALSE(pool.take_out(1, 200.0));  // an idle node's failure stops nothing
}

}  // namespace
}  // namespace weft
