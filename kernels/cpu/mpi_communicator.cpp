#include "kernels/cpu/mpi_communicator.hpp"

#include <sched.h>

#include <climits>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <Eigen/Core>

namespace weft::cpu {
namespace {

template <class Half>
void sum_half(void* in, void* inout, int* length, MPI_Datatype*) {
  const auto* a = static_cast<const Half*>(in);
  auto* b = static_cast<Half*>(inout);
  for (int i = 0; i < *length; ++i) b[i] = Half(static_cast<float>(a[i]) + static_cast<float>(b[i]));
}

// MPI has no 16-bit floating-point sums: weft's own, created on first use.
struct ReductionOps {
  MPI_Op bf16 = MPI_OP_NULL;
  MPI_Op fp16 = MPI_OP_NULL;
};

ReductionOps created_ops;

ReductionOps& reduction_ops() {
  ReductionOps& ops = created_ops;
  if (ops.bf16 == MPI_OP_NULL) {
    check_mpi(MPI_Op_create(&sum_half<Eigen::bfloat16>, 1, &ops.bf16), "MPI_Op_create");
    check_mpi(MPI_Op_create(&sum_half<Eigen::half>, 1, &ops.fp16), "MPI_Op_create");
  }
  return ops;
}

struct Reduction {
  MPI_Datatype type;
  MPI_Op op;
  int element;
};

Reduction reduction_for(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp32:
    case Dtype::tf32:
      return {MPI_FLOAT, MPI_SUM, 4};
    case Dtype::bf16:
      return {MPI_UINT16_T, reduction_ops().bf16, 2};
    case Dtype::fp16:
      return {MPI_UINT16_T, reduction_ops().fp16, 2};
    case Dtype::int8:
      return {MPI_INT8_T, MPI_SUM, 1};
    case Dtype::fp8:
      break;
  }
  throw std::runtime_error("MPI reductions in " + std::string(kDtypeNames.name(dtype)) + " are not supported");
}

int mpi_count(std::int64_t count, std::string_view what) {
  if (count > INT_MAX) throw std::runtime_error(fmt::format("{}: {} elements exceed MPI's count limit", what, count));
  return static_cast<int>(count);
}

class MpiRequest final : public Request {
 public:
  MpiRequest(MPI_Request request, std::string what) : request_(request), what_(std::move(what)) {}
  ~MpiRequest() override {
    if (request_ != MPI_REQUEST_NULL) MPI_Request_free(&request_);
  }

  bool test() override {
    if (request_ == MPI_REQUEST_NULL) return true;
    int done = 0;
    check_mpi(MPI_Test(&request_, &done, MPI_STATUS_IGNORE), "MPI_Test");
    return done != 0;
  }

  void order_before_compute(std::chrono::steady_clock::time_point deadline) override {
    while (!test()) {
      if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("timed out waiting for " + what_);
      sched_yield();
    }
  }

 private:
  MPI_Request request_;
  std::string what_;
};

}  // namespace

void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

void free_reduction_ops() {
  if (created_ops.bf16 == MPI_OP_NULL) return;
  MPI_Op_free(&created_ops.bf16);
  MPI_Op_free(&created_ops.fp16);
}

MpiCommunicator::MpiCommunicator(MPI_Comm comm, bool owned) : comm_(comm), owned_(owned) {
  check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
}

MpiCommunicator::~MpiCommunicator() {
  if (owned_) MPI_Comm_free(&comm_);
}

std::unique_ptr<Communicator> MpiCommunicator::split(int color, int key) {
  MPI_Comm out = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &out), "MPI_Comm_split");
  if (out == MPI_COMM_NULL) return nullptr;
  return std::make_unique<MpiCommunicator>(out, true);
}

std::unique_ptr<Request> MpiCommunicator::start(const CommOp& op, const std::byte* send, std::byte* recv) {
  MPI_Request request = MPI_REQUEST_NULL;
  const std::string what = fmt::format("{} of {} bytes", kOpClassNames.name(op.op_class), op.bytes);
  const std::int64_t share = op.bytes / size_;
  switch (op.op_class) {
    case OpClass::allreduce: {
      const Reduction r = reduction_for(op.dtype);
      check_mpi(MPI_Iallreduce(send, recv, mpi_count(op.bytes / r.element, what), r.type, r.op, comm_, &request),
                "MPI_Iallreduce");
      break;
    }
    case OpClass::reducescatter: {
      const Reduction r = reduction_for(op.dtype);
      check_mpi(
          MPI_Ireduce_scatter_block(send, recv, mpi_count(share / r.element, what), r.type, r.op, comm_, &request),
          "MPI_Ireduce_scatter_block");
      break;
    }
    case OpClass::allgather:
      check_mpi(MPI_Iallgather(send, mpi_count(share, what), MPI_BYTE, recv, mpi_count(share, what), MPI_BYTE, comm_,
                               &request),
                "MPI_Iallgather");
      break;
    case OpClass::alltoall:
      check_mpi(MPI_Ialltoall(send, mpi_count(share, what), MPI_BYTE, recv, mpi_count(share, what), MPI_BYTE, comm_,
                              &request),
                "MPI_Ialltoall");
      break;
    case OpClass::broadcast:
      check_mpi(MPI_Ibcast(recv, mpi_count(op.bytes, what), MPI_BYTE, 0, comm_, &request), "MPI_Ibcast");
      break;
    case OpClass::send:
      check_mpi(MPI_Isend(send, mpi_count(op.bytes, what), MPI_BYTE, op.peer, op.tag, comm_, &request), "MPI_Isend");
      return std::make_unique<MpiRequest>(request, fmt::format("{} to rank {} (tag {})", what, op.peer, op.tag));
    case OpClass::recv:
      check_mpi(MPI_Irecv(recv, mpi_count(op.bytes, what), MPI_BYTE, op.peer, op.tag, comm_, &request), "MPI_Irecv");
      return std::make_unique<MpiRequest>(request, fmt::format("{} from rank {} (tag {})", what, op.peer, op.tag));
    default:
      throw std::runtime_error("not a communication op: " + std::string(kOpClassNames.name(op.op_class)));
  }
  return std::make_unique<MpiRequest>(request, what);
}

void MpiCommunicator::broadcast_host(std::byte* data, std::int64_t bytes, int root) {
  check_mpi(MPI_Bcast(data, mpi_count(bytes, "broadcast"), MPI_BYTE, root, comm_), "MPI_Bcast");
}

double MpiCommunicator::max_host(double value) {
  double result = value;
  check_mpi(MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, MPI_MAX, comm_), "MPI_Allreduce");
  return result;
}

std::vector<std::vector<std::byte>> MpiCommunicator::gather_host(const std::vector<std::byte>& data, int root) {
  const int length = mpi_count(static_cast<std::int64_t>(data.size()), "gather");
  std::vector<int> lengths(rank_ == root ? static_cast<std::size_t>(size_) : 0);
  check_mpi(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, root, comm_), "MPI_Gather");
  std::vector<int> offsets(lengths.size(), 0);
  std::int64_t total = 0;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    offsets[i] = mpi_count(total, "gather");
    total += lengths[i];
  }
  std::vector<std::byte> all(static_cast<std::size_t>(total));
  check_mpi(
      MPI_Gatherv(data.data(), length, MPI_BYTE, all.data(), lengths.data(), offsets.data(), MPI_BYTE, root, comm_),
      "MPI_Gatherv");
  std::vector<std::vector<std::byte>> parts;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    const auto begin = all.begin() + offsets[i];
    parts.emplace_back(begin, begin + lengths[i]);
  }
  return parts;
}

void MpiCommunicator::barrier() { check_mpi(MPI_Barrier(comm_), "MPI_Barrier"); }

}  // namespace weft::cpu
