#include "kernels/cuda/nccl_communicator.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "kernels/cuda/cuda_errors.hpp"

namespace weft::cuda {
namespace {

void check_nccl(ncclResult_t status, const char* what) {
  if (status != ncclSuccess) throw std::runtime_error(std::string(what) + " failed: " + ncclGetErrorString(status));
}

struct Elements {
  ncclDataType_t type;
  std::int64_t size;
};

Elements reduction_elements(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp32:
    case Dtype::tf32:
      return {ncclFloat32, 4};
    case Dtype::fp16:
      return {ncclFloat16, 2};
    case Dtype::bf16:
      return {ncclBfloat16, 2};
    case Dtype::int8:
      return {ncclInt8, 1};
    case Dtype::fp8:
      break;
  }
  throw std::runtime_error("NCCL reductions in fp8 are not supported");
}

// Completion of NCCL work: an event recorded on its stream after it.
class NcclRequest final : public Request {
 public:
  NcclRequest(cudaStream_t stream, cudaStream_t compute) : compute_(compute) {
    check_cuda(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreate");
    check_cuda(cudaEventRecord(event_, stream), "cudaEventRecord");
  }
  ~NcclRequest() override { cudaEventDestroy(event_); }

  bool test() override { return cudaEventQuery(event_) == cudaSuccess; }
  void order_before_compute(std::chrono::steady_clock::time_point) override {
    check_cuda(cudaStreamWaitEvent(compute_, event_, 0), "cudaStreamWaitEvent");
  }

 private:
  cudaEvent_t event_ = nullptr;
  cudaStream_t compute_;
};

}  // namespace

std::unique_ptr<NcclCommunicator> NcclCommunicator::create(std::unique_ptr<Communicator> host,
                                                           const CommStreams& streams, NcclRegistry& registry) {
  ncclUniqueId id{};
  if (host->rank() == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  host->broadcast_host(reinterpret_cast<std::byte*>(&id), sizeof(id), 0);
  ncclComm_t comm = nullptr;
  check_nccl(ncclCommInitRank(&comm, host->size(), id, host->rank()), "ncclCommInitRank");
  return std::make_unique<NcclCommunicator>(comm, std::move(host), streams, registry);
}

NcclCommunicator::NcclCommunicator(ncclComm_t comm, std::unique_ptr<Communicator> host, const CommStreams& streams,
                                   NcclRegistry& registry)
    : comm_(comm), registry_(registry), host_(std::move(host)), streams_(streams) {
  registry_.add(comm_);
}

NcclCommunicator::~NcclCommunicator() {
  if (registry_.remove(comm_)) ncclCommDestroy(comm_);  // an aborted communicator is gone already
  if (compute_ready_ != nullptr) cudaEventDestroy(compute_ready_);
}

int NcclCommunicator::version() {
  int version = 0;
  ncclGetVersion(&version);
  return version;
}

std::unique_ptr<Communicator> NcclCommunicator::split(int color, int key) {
  std::unique_ptr<Communicator> host = host_->split(color, key);
  ncclComm_t comm = nullptr;
  check_nccl(ncclCommSplit(comm_, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &comm, nullptr), "ncclCommSplit");
  if (host == nullptr) return nullptr;
  return std::make_unique<NcclCommunicator>(comm, std::move(host), streams_, registry_);
}

cudaStream_t NcclCommunicator::stream_for(const CommOp& op) const {
  if (op.on_compute_stream) return streams_.compute;
  if (op.op_class == OpClass::send) return streams_.sends;
  if (op.op_class == OpClass::recv) return streams_.receives;
  return streams_.collectives;
}

void NcclCommunicator::after_compute(cudaStream_t stream) {
  if (stream == streams_.compute) return;
  if (compute_ready_ == nullptr) {
    check_cuda(cudaEventCreateWithFlags(&compute_ready_, cudaEventDisableTiming), "cudaEventCreate");
  }
  check_cuda(cudaEventRecord(compute_ready_, streams_.compute), "cudaEventRecord");
  check_cuda(cudaStreamWaitEvent(stream, compute_ready_, 0), "cudaStreamWaitEvent");
}

void NcclCommunicator::enqueue(const CommOp& op, const std::byte* send, std::byte* recv, cudaStream_t stream) {
  const auto n = static_cast<std::size_t>(size());
  const auto bytes = static_cast<std::size_t>(op.bytes);
  switch (op.op_class) {
    case OpClass::allreduce: {
      const Elements e = reduction_elements(op.dtype);
      check_nccl(ncclAllReduce(send, recv, bytes / static_cast<std::size_t>(e.size), e.type, ncclSum, comm_, stream),
                 "ncclAllReduce");
      break;
    }
    case OpClass::reducescatter: {
      const Elements e = reduction_elements(op.dtype);
      check_nccl(
          ncclReduceScatter(send, recv, bytes / n / static_cast<std::size_t>(e.size), e.type, ncclSum, comm_, stream),
          "ncclReduceScatter");
      break;
    }
    case OpClass::allgather:
      check_nccl(ncclAllGather(send, recv, bytes / n, ncclUint8, comm_, stream), "ncclAllGather");
      break;
    case OpClass::alltoall:
      check_nccl(ncclGroupStart(), "ncclGroupStart");
      for (std::size_t peer = 0; peer < n; ++peer) {
        const std::size_t share = bytes / n;
        check_nccl(ncclSend(send + peer * share, share, ncclUint8, static_cast<int>(peer), comm_, stream), "ncclSend");
        check_nccl(ncclRecv(recv + peer * share, share, ncclUint8, static_cast<int>(peer), comm_, stream), "ncclRecv");
      }
      check_nccl(ncclGroupEnd(), "ncclGroupEnd");
      break;
    case OpClass::broadcast:
      check_nccl(ncclBroadcast(recv, recv, bytes, ncclUint8, 0, comm_, stream), "ncclBroadcast");
      break;
    case OpClass::send:
      check_nccl(ncclSend(send, bytes, ncclUint8, op.peer, comm_, stream), "ncclSend");
      break;
    case OpClass::recv:
      check_nccl(ncclRecv(recv, bytes, ncclUint8, op.peer, comm_, stream), "ncclRecv");
      break;
    default:
      throw std::runtime_error("not a communication op: " + std::string(kOpClassNames.name(op.op_class)));
  }
  registry_.issued(fmt::format("{} of {} bytes {} {}", kOpClassNames.name(op.op_class), op.bytes,
                               op.peer >= 0 ? "with rank" : "over", op.peer >= 0 ? op.peer : size()),
                   stream);
}

std::unique_ptr<Request> NcclCommunicator::start(const CommOp& op, const std::byte* send, std::byte* recv) {
  const cudaStream_t stream = stream_for(op);
  after_compute(stream);
  enqueue(op, send, recv, stream);
  return std::make_unique<NcclRequest>(stream, streams_.compute);
}

std::vector<std::unique_ptr<Request>> NcclCommunicator::start_group(const std::vector<GroupedOp>& ops) {
  // One stream for the whole group: the sends' when it sends at all, else the receives'.
  const bool sends =
      std::any_of(ops.begin(), ops.end(), [](const GroupedOp& g) { return g.op.op_class != OpClass::recv; });
  const bool on_compute =
      std::any_of(ops.begin(), ops.end(), [](const GroupedOp& g) { return g.op.on_compute_stream; });
  const cudaStream_t stream = on_compute ? streams_.compute : sends ? streams_.sends : streams_.receives;
  after_compute(stream);
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (const GroupedOp& g : ops) enqueue(g.op, g.send, g.recv, stream);
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  std::vector<std::unique_ptr<Request>> requests;
  for (std::size_t i = 0; i < ops.size(); ++i)
    requests.push_back(std::make_unique<NcclRequest>(stream, streams_.compute));
  return requests;
}

void NcclCommunicator::broadcast_host(std::byte* data, std::int64_t bytes, int root) {
  host_->broadcast_host(data, bytes, root);
}

double NcclCommunicator::max_host(double value) { return host_->max_host(value); }

std::vector<std::vector<std::byte>> NcclCommunicator::gather_host(const std::vector<std::byte>& data, int root) {
  return host_->gather_host(data, root);
}

void NcclCommunicator::barrier() { host_->barrier(); }

}  // namespace weft::cuda
