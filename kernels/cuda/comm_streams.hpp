#pragma once

#include <cuda_runtime_api.h>

namespace weft::cuda {

// The streams the CUDA backend issues work on: compute (kernels and synchronous communication),
// one for asynchronous collectives, and one each for sends and receives, so that a rank's
// pending send never holds up the receive its peer waits on.
struct CommStreams {
  cudaStream_t compute = nullptr;
  cudaStream_t collectives = nullptr;
  cudaStream_t sends = nullptr;
  cudaStream_t receives = nullptr;
};

}  // namespace weft::cuda
