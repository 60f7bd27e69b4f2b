#include "kernels/cpu/mpi_job.hpp"

#include <cstdlib>

namespace weft::cpu {

MpiJob::MpiJob() {
  int provided = 0;
  check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  world_ = std::make_unique<MpiCommunicator>(MPI_COMM_WORLD, false);
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  MPI_Comm_size(node, &local_size_);
  MPI_Comm_rank(node, &local_rank_);
  MPI_Comm_free(&node);
}

MpiJob::~MpiJob() {
  world_.reset();
  free_reduction_ops();
  MPI_Finalize();
}

void MpiJob::abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace weft::cpu
