#pragma once

#include <memory>

#include "kernels/cpu/mpi_communicator.hpp"

namespace weft::cpu {

// This process as one rank of an MPI job (started by mpirun, or a job of one rank when started
// alone): initializes MPI on construction, finalizes it on destruction. MPI errors are returned to
// weft, which reports them, instead of ending the job inside the library. One per process.
class MpiJob {
 public:
  MpiJob();
  ~MpiJob();
  MpiJob(const MpiJob&) = delete;
  MpiJob& operator=(const MpiJob&) = delete;

  Communicator& world() { return *world_; }
  int rank() const { return world_->rank(); }
  int size() const { return world_->size(); }
  // Ranks of the job on this node, and this rank's index among them (whatever the mapping of
  // ranks to nodes: a GPU per local rank).
  int local_size() const { return local_size_; }
  int local_rank() const { return local_rank_; }

  // Ends every rank of the job with `code`: what a rank does on an error the others cannot know
  // of, so that none of them waits for it forever.
  [[noreturn]] static void abort(int code);

 private:
  std::unique_ptr<MpiCommunicator> world_;
  int local_size_ = 1;
  int local_rank_ = 0;
};

}  // namespace weft::cpu
