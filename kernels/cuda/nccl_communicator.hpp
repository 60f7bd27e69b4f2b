#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "kernels/communicator.hpp"
#include "kernels/cuda/comm_streams.hpp"
#include "kernels/cuda/nccl_registry.hpp"

namespace weft::cuda {

// GPU communication through NCCL; host-side exchanges (and the bootstrap of NCCL's unique id)
// go through `host`, the MPI communicator over the same ranks.
class NcclCommunicator final : public Communicator {
 public:
  // Every rank of `host` calls it together. The communicator and those split from it register
  // with `registry`, which must outlive them.
  static std::unique_ptr<NcclCommunicator> create(std::unique_ptr<Communicator> host, const CommStreams& streams,
                                                  NcclRegistry& registry);

  NcclCommunicator(ncclComm_t comm, std::unique_ptr<Communicator> host, const CommStreams& streams,
                   NcclRegistry& registry);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return host_->rank(); }
  int size() const override { return host_->size(); }
  std::unique_ptr<Communicator> split(int color, int key) override;
  std::unique_ptr<Request> start(const CommOp& op, const std::byte* send, std::byte* recv) override;
  std::vector<std::unique_ptr<Request>> start_group(const std::vector<GroupedOp>& ops) override;
  void broadcast_host(std::byte* data, std::int64_t bytes, int root) override;
  double max_host(double value) override;
  std::vector<std::vector<std::byte>> gather_host(const std::vector<std::byte>& data, int root) override;
  void barrier() override;

  static int version();

 private:
  cudaStream_t stream_for(const CommOp& op) const;
  // Orders `stream` after the work issued so far on the compute stream, which the op reads.
  void after_compute(cudaStream_t stream);
  // Enqueues `op` on `stream` (inside a group or not).
  void enqueue(const CommOp& op, const std::byte* send, std::byte* recv, cudaStream_t stream);

  ncclComm_t comm_;
  NcclRegistry& registry_;
  std::unique_ptr<Communicator> host_;
  CommStreams streams_;
  // Recorded on the compute stream for each wait: a stream waits for the event's record as of its
  // cudaStreamWaitEvent call, so one event serves every op (none created per op on the host path).
  cudaEvent_t compute_ready_ = nullptr;
};

}  // namespace weft::cuda
