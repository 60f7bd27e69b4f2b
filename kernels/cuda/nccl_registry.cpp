#include "kernels/cuda/nccl_registry.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "kernels/cuda/cuda_errors.hpp"

namespace weft::cuda {

NcclRegistry::~NcclRegistry() {
  for (auto& [description, event] : in_flight_) cudaEventDestroy(event);
  for (cudaEvent_t event : spare_events_) cudaEventDestroy(event);
}

void NcclRegistry::add(ncclComm_t comm) { comms_.push_back(comm); }

bool NcclRegistry::remove(ncclComm_t comm) {
  comms_.erase(std::remove(comms_.begin(), comms_.end(), comm), comms_.end());
  return std::find(aborted_.begin(), aborted_.end(), comm) == aborted_.end();
}

void NcclRegistry::issued(const std::string& description, cudaStream_t stream) {
  // Forget what has finished, oldest first, and reuse its events.
  while (!in_flight_.empty() && cudaEventQuery(in_flight_.front().second) == cudaSuccess) {
    spare_events_.push_back(in_flight_.front().second);
    in_flight_.pop_front();
  }
  cudaEvent_t event = nullptr;
  if (spare_events_.empty()) {
    check_cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate");
  } else {
    event = spare_events_.back();
    spare_events_.pop_back();
  }
  check_cuda(cudaEventRecord(event, stream), "cudaEventRecord");
  in_flight_.emplace_back(description, event);
}

std::string NcclRegistry::failure() {
  for (ncclComm_t comm : comms_) {
    ncclResult_t state = ncclSuccess;
    if (ncclCommGetAsyncError(comm, &state) != ncclSuccess) return "ncclCommGetAsyncError failed";
    if (state != ncclSuccess && state != ncclInProgress) return ncclGetErrorString(state);
  }
  return {};
}

std::string NcclRegistry::oldest_pending() {
  for (const auto& [description, event] : in_flight_) {
    if (cudaEventQuery(event) != cudaSuccess) return fmt::format("rank {}: NCCL {}", world_rank_, description);
  }
  return fmt::format("rank {}: the work queued on the GPU", world_rank_);
}

void NcclRegistry::abort_all() {
  for (ncclComm_t comm : comms_) {
    if (std::find(aborted_.begin(), aborted_.end(), comm) != aborted_.end()) continue;
    ncclCommAbort(comm);
    aborted_.push_back(comm);
  }
}

}  // namespace weft::cuda
