#include "kernels/communicator.hpp"

namespace weft {

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
