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

class Then final : public Request {
 public:
  Then(std::unique_ptr<Request> first, std::function<std::unique_ptr<Request>()> next)
      : current_(std::move(first)), next_(std::move(next)) {}

  bool test() override {
    if (!current_->test()) return false;
    if (!next_) return true;
    start_next();
    return current_->test();
  }

  void order_before_compute(std::chrono::steady_clock::time_point deadline) override {
    current_->order_before_compute(deadline);
    if (!next_) return;
    start_next();
    current_->order_before_compute(deadline);
  }

 private:
  void start_next() {
    current_ = next_();
    next_ = nullptr;
  }

  std::unique_ptr<Request> current_;
  std::function<std::unique_ptr<Request>()> next_;
};

}  // namespace

std::unique_ptr<Request> then(std::unique_ptr<Request> first, std::function<std::unique_ptr<Request>()> next) {
  return std::make_unique<Then>(std::move(first), std::move(next));
}

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
