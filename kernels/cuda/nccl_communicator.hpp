#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "kernels/communicator.hpp"
#include "kernels/cuda/comm_streams.hpp"

namespace weft::cuda {

// GPU communication through NCCL; host-side exchanges (and the bootstrap of NCCL's unique id)
// go through `host`, the MPI communicator over the same ranks.
class NcclCommunicator final : public Communicator {
 public:
  // Every rank of `host` calls it together.
  static std::unique_ptr<NcclCommunicator> create(std::unique_ptr<Communicator> host, const CommStreams& streams);

  NcclCommunicator(ncclComm_t comm, std::unique_ptr<Communicator> host, const CommStreams& streams);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return host_->rank(); }
  int size() const override { return host_->size(); }
  std::unique_ptr<Communicator> split(int color, int key) override;
  std::unique_ptr<Request> start(const CommOp& op, const std::byte* send, std::byte* recv) override;
  void broadcast_host(std::byte* data, std::int64_t bytes, int root) override;
  double max_host(double value) override;
  std::vector<std::vector<std::byte>> gather_host(const std::vector<std::byte>& data, int root) override;
  void barrier() override;

  static int version();

 private:
  cudaStream_t stream_for(const CommOp& op) const;

  ncclComm_t comm_;
  std::unique_ptr<Communicator> host_;
  CommStreams streams_;
};

}  // namespace weft::cuda
