#pragma once

#include <mpi.h>

#include "kernels/communicator.hpp"

namespace weft::cpu {

// Communication through MPI: non-blocking collectives and point-to-point messages, 16-bit
// reductions with weft's own MPI operations (fp32 accumulation, rounded to nearest even).
class MpiCommunicator final : public Communicator {
 public:
  // Wraps `comm`; frees it when `owned`.
  MpiCommunicator(MPI_Comm comm, bool owned);
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::unique_ptr<Communicator> split(int color, int key) override;
  std::unique_ptr<Request> start(const CommOp& op, const std::byte* send, std::byte* recv) override;
  void broadcast_host(std::byte* data, std::int64_t bytes, int root) override;
  double max_host(double value) override;
  std::vector<std::vector<std::byte>> gather_host(const std::vector<std::byte>& data, int root) override;
  void barrier() override;

 private:
  MPI_Comm comm_;
  bool owned_;
  int rank_ = 0;
  int size_ = 1;
};

// Throws a runtime error naming `call` and MPI's message unless `code` is MPI_SUCCESS.
void check_mpi(int code, const char* call);

// Frees the reduction operations weft created; call before MPI_Finalize.
void free_reduction_ops();

}  // namespace weft::cpu
