#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <deque>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace weft::cuda {

// The NCCL communicators of one backend and the communication ops in flight on them, so that a
// wait for the device can check them for asynchronous errors, name the op that does not finish,
// and abort them (kernels/queued_work_wait.hpp).
class NcclRegistry {
 public:
  explicit NcclRegistry(int world_rank) : world_rank_(world_rank) {}
  ~NcclRegistry();
  NcclRegistry(const NcclRegistry&) = delete;
  NcclRegistry& operator=(const NcclRegistry&) = delete;

  void add(ncclComm_t comm);
  // Whether the communicator may still be destroyed (it was not aborted).
  bool remove(ncclComm_t comm);
  bool empty() const { return comms_.empty(); }

  // An op just issued on `stream`: "all-reduce of 4096 bytes over 8 ranks".
  void issued(const std::string& description, cudaStream_t stream);
  // The first asynchronous error of a communicator; empty while there is none.
  std::string failure();
  // The oldest op issued that has not finished, as the error names it.
  std::string oldest_pending();
  void abort_all();

 private:
  int world_rank_;
  std::vector<ncclComm_t> comms_;
  std::vector<ncclComm_t> aborted_;
  std::deque<std::pair<std::string, cudaEvent_t>> in_flight_;
  std::vector<cudaEvent_t> spare_events_;
};

}  // namespace weft::cuda
