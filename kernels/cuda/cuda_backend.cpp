#include "kernels/cuda/cuda_backend.hpp"

#include <cupti.h>

#include <string>

#include <fmt/format.h>

#include "kernels/cuda/cuda_errors.hpp"
#include "kernels/cuda/flash_attention_problem.hpp"
#include "kernels/cuda/flash_attention_tiles.hpp"
#include "kernels/cuda/memory_bound_kernel.hpp"
#include "kernels/queued_work_wait.hpp"
#if WEFT_HAVE_NCCL
#include "kernels/cuda/nccl_communicator.hpp"
#endif
#include "simulator/core/input_error.hpp"

namespace weft::cuda {
namespace {

ElementType element_type(Dtype dtype, const char* op) {
  switch (dtype) {
    case Dtype::fp32:
      return ElementType::fp32;
    case Dtype::fp16:
      return ElementType::fp16;
    case Dtype::bf16:
      return ElementType::bf16;
    default:
      throw InputError(std::string(op) + " on the cuda backend runs in fp32, fp16 and bf16, not " +
                       std::string(kDtypeNames.name(dtype)));
  }
}

std::string version_text(int version) { return fmt::format("{}.{}", version / 1000, (version % 1000) / 10); }

BackendDevice describe(int device) {
  cudaDeviceProp properties{};
  check_cuda(cudaGetDeviceProperties(&properties, device), "cudaGetDeviceProperties");
  int runtime = 0;
  int driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  uint32_t cupti = 0;
  cuptiGetVersion(&cupti);
  BackendDevice info;
  info.backend = "cuda";
  info.name = properties.name;
  info.libraries = {
    {"cuda runtime", version_text(runtime)},
    {"cuda driver", version_text(driver)},
    {"cublaslt", std::to_string(CublasLtGemm::version())},
#if WEFT_HAVE_NCCL
    {"nccl", std::to_string(NcclCommunicator::version())},
#endif
#if WEFT_HAVE_CUDNN
    {"cudnn", std::to_string(CudnnAttention::version())},
#endif
    {"cupti", std::to_string(cupti)},
    {"compute capability", fmt::format("sm_{}{}", properties.major, properties.minor)}
  };
  info.dtypes = {Dtype::fp32, Dtype::tf32, Dtype::fp16, Dtype::bf16};
  info.memory_bytes = static_cast<std::int64_t>(properties.totalGlobalMem);
  return info;
}

FlashAttentionProblem problem(const AttentionShape& shape, const std::string& limit) {
  if (!limit.empty()) throw InputError("attention " + attention_text(shape) + ": " + limit);
  if (shape.head_dim > flash::kMaxHeadDim) {
    throw InputError(fmt::format("attention on the cuda backend supports head_dim up to {}, got {}", flash::kMaxHeadDim,
                                 shape.head_dim));
  }
  if (!flash::slices_fit_grid(shape.batch, shape.heads)) {
    throw InputError(fmt::format("attention on the cuda backend runs at most {} batch x head slices, got {} x {}",
                                 flash::kMaxGridY, shape.batch, shape.heads));
  }
  return flash_attention_problem(shape, element_type(shape.dtype, "attention"));
}

}  // namespace

CudaBackend::CudaBackend(int device) {
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  device_ = describe(device);
  for (cudaStream_t* stream : {&streams_.compute, &streams_.collectives, &streams_.sends, &streams_.receives}) {
    check_cuda(cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  gemm_ = std::make_unique<CublasLtGemm>();
#if WEFT_HAVE_CUDNN
  cudnn_ = std::make_unique<CudnnAttention>();
#endif
  check_cuda(cudaDeviceGetAttribute(&compute_capability_major_, cudaDevAttrComputeCapabilityMajor, device),
             "cudaDeviceGetAttribute");
  int grid_x = 0;
  int shared_per_block = 0;
  check_cuda(cudaDeviceGetAttribute(&grid_x, cudaDevAttrMaxGridDimX, device), "cudaDeviceGetAttribute");
  check_cuda(cudaDeviceGetAttribute(&shared_per_block, cudaDevAttrMaxSharedMemoryPerBlock, device),
             "cudaDeviceGetAttribute");
  max_grid_x_ = grid_x;
  std::size_t attention_shared = 0;
  check_cuda(flash_attention_shared_bytes(&attention_shared), "cudaFuncGetAttributes(weft attention)");
  if (attention_shared > static_cast<std::size_t>(shared_per_block)) {
    attention_kernel_limit_ = fmt::format(
        "weft's attention kernel needs {} bytes of shared memory per block; this "
        "device offers {}",
        attention_shared, shared_per_block);
  }
  timeline_ = make_kernel_timeline(streams_.compute);
  device_.timing = timeline_->description();
  device_.times_kernels = timeline_->times_kernels();
  device_.times_async_work = timeline_->times_every_stream();
  device_.issues_asynchronously = true;
  device_.libraries.emplace_back("span timing", device_.timing);
}

CudaBackend::~CudaBackend() {
  cudaDeviceSynchronize();
  gemm_.reset();
#if WEFT_HAVE_CUDNN
  cudnn_.reset();
#endif
  scratch_ = {};
  for (cudaStream_t stream : {streams_.compute, streams_.collectives, streams_.sends, streams_.receives}) {
    cudaStreamDestroy(stream);
  }
}

Buffer CudaBackend::allocate(std::int64_t bytes) {
  void* memory = nullptr;
  check_cuda(cudaMalloc(&memory, static_cast<std::size_t>(bytes > 0 ? bytes : 1)), "cudaMalloc");
  return Buffer(std::shared_ptr<std::byte>(static_cast<std::byte*>(memory), [](std::byte* p) { cudaFree(p); }), bytes);
}

void CudaBackend::upload(std::byte* device, const std::byte* host, std::int64_t bytes) {
  check_cuda(cudaMemcpy(device, host, static_cast<std::size_t>(bytes), cudaMemcpyHostToDevice), "cudaMemcpy");
}

void CudaBackend::gemm(const GemmShape& shape, const std::byte* a, const std::byte* b, std::byte* c) {
  check_shape(shape);
  gemm_->run(shape, a, b, c, streams_.compute);
}

Kernel CudaBackend::attention_kernel(const AttentionShape& shape) const {
#if WEFT_HAVE_CUDNN
  if (CudnnAttention::unsupported(shape, compute_capability_major_).empty()) return Kernel::cudnn;
#else
  (void)shape;
#endif
  return Kernel::any;
}

void CudaBackend::attention_forward(const AttentionShape& shape, const AttentionForwardArgs& args) {
  check_shape(shape);
#if WEFT_HAVE_CUDNN
  if (attention_kernel(shape) == Kernel::cudnn) return cudnn_->forward(shape, args, streams_.compute);
#endif
  check_cuda(launch_flash_attention_forward(problem(shape, attention_kernel_limit_), args.q, args.k, args.v, args.o,
                                            reinterpret_cast<float*>(args.lse), streams_.compute),
             "flash attention forward");
}

void CudaBackend::attention_backward(const AttentionShape& shape, const AttentionBackwardArgs& args) {
  check_shape(shape);
#if WEFT_HAVE_CUDNN
  if (attention_kernel(shape) == Kernel::cudnn) return cudnn_->backward(shape, args, streams_.compute);
#endif
  const std::int64_t rows = shape.batch * shape.heads * shape.queries;
  float* accumulator = scratch((rows * shape.head_dim + rows) * 4);
  check_cuda(
      launch_flash_attention_backward(problem(shape, attention_kernel_limit_), args.q, args.k, args.v, args.o,
                                      reinterpret_cast<const float*>(args.lse), args.d_o, args.d_q, args.d_k, args.d_v,
                                      accumulator, accumulator + rows * shape.head_dim, streams_.compute),
      "flash attention backward");
}

void CudaBackend::memory_bound(const MemoryBoundShape& shape, const std::byte* in, std::byte* out) {
  check_shape(shape);
  constexpr long kThreads = 256;  // memory_bound.cu's block
  if ((shape.outputs + kThreads - 1) / kThreads > max_grid_x_) {
    throw InputError(
        fmt::format("memory-bound op of {} outputs: {} blocks of {} threads, and this device launches "
                    "at most {}",
                    shape.outputs, (shape.outputs + kThreads - 1) / kThreads, kThreads, max_grid_x_));
  }
  check_cuda(launch_memory_bound(shape.inputs, shape.outputs, shape.flops_per_output,
                                 element_type(shape.dtype, "memory-bound op"), in, out, streams_.compute),
             "memory-bound kernel");
}

#if WEFT_HAVE_NCCL
namespace {

// The backend's streams and communicators, as kernels/queued_work_wait.hpp waits for them.
class QueuedOnStreams final : public QueuedWork {
 public:
  QueuedOnStreams(const CommStreams& streams, NcclRegistry& nccl) : streams_(streams), nccl_(nccl) {}
  bool done() override {
    for (cudaStream_t stream : {streams_.compute, streams_.collectives, streams_.sends, streams_.receives}) {
      const cudaError_t state = cudaStreamQuery(stream);
      if (state == cudaErrorNotReady) return false;
      check_cuda(state, "cudaStreamQuery");
    }
    return true;
  }
  std::string failure() override { return nccl_.failure(); }
  std::string pending() override { return nccl_.oldest_pending(); }
  void abandon() override { nccl_.abort_all(); }

 private:
  const CommStreams& streams_;
  NcclRegistry& nccl_;
};

}  // namespace
#endif

void CudaBackend::synchronize() {
#if WEFT_HAVE_NCCL
  if (nccl_ && !nccl_->empty()) {
    // A peer that is gone leaves NCCL's kernels spinning: poll, and give up at the limit.
    QueuedOnStreams work(streams_, *nccl_);
    wait_for(work, std::chrono::steady_clock::now() + wait_limit_, steady_wait_clock());
  }
#endif
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

float* CudaBackend::scratch(std::int64_t bytes) {
  if (scratch_.bytes() < bytes) {
    synchronize();  // the previous scratch may still be in use
    scratch_ = allocate(bytes);
  }
  return reinterpret_cast<float*>(scratch_.data());
}

std::unique_ptr<Communicator> CudaBackend::world_communicator(Communicator& world) {
#if WEFT_HAVE_NCCL
  if (!nccl_) nccl_ = std::make_unique<NcclRegistry>(world.rank());
  return NcclCommunicator::create(world.split(0, world.rank()), streams_, *nccl_);
#else
  (void)world;
  throw InputError(
      "--backend cuda: weft was built without NCCL (nccl.h and libnccl were not found at configure "
      "time); communication on GPUs needs it");
#endif
}

}  // namespace weft::cuda
