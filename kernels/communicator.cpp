#include "kernels/communicator.hpp"

namespace weft {

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
