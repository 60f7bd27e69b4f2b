#include "kernels/communicator.hpp"

namespace weft {
namespace {

class AllOf final : public Request {
 public:
  explicit AllOf(std::vector<std::unique_ptr<Request>> parts) : parts_(std::move(parts)) {}

  bool test() override {
    bool done = true;
    for (const auto& part : parts_) done = part->test() && done;  // every part progresses
    return done;
  }

  void order_before_compute(std::chrono::steady_clock::time_point deadline) override {
    for (const auto& part : parts_) part->order_before_compute(deadline);
  }

 private:
  std::vector<std::unique_ptr<Request>> parts_;
};

}  // namespace

std::unique_ptr<Request> all_of(std::vector<std::unique_ptr<Request>> parts) {
  if (parts.size() == 1) return std::move(parts.front());
  return std::make_unique<AllOf>(std::move(parts));
}

std::vector<std::unique_ptr<Request>> Communicator::start_group(const std::vector<GroupedOp>& ops) {
  std::vector<std::unique_ptr<Request>> requests;
  for (const GroupedOp& g : ops) requests.push_back(start(g.op, g.send, g.recv));
  return requests;
}

std::int64_t comm_send_bytes(const CommOp& op, int size) {
  switch (op.op_class) {
    case OpClass::allgather:
      return op.bytes / size;
    case OpClass::broadcast:
    case OpClass::recv:
      return 0;
    default:
      return op.bytes;
  }
}

std::int64_t comm_recv_bytes(const CommOp& op, int size) {
  switch (op.op_class) {
    case OpClass::reducescatter:
      return op.bytes / size;
    case OpClass::send:
      return 0;
    default:
      return op.bytes;
  }
}

}  // namespace weft
