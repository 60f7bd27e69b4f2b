#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include <boost/container/small_vector.hpp>

#include "simulator/core/dtype.hpp"
#include "simulator/core/kernel.hpp"
#include "simulator/core/op_class.hpp"
#include "simulator/core/units.hpp"

namespace weft {

// An op's shape, op-class specific: at most 7 entries (attention's with grouped-query heads) are
// held inline, so that copying a work (steps, interning, cost lookups) does not allocate.
using WorkShape = boost::container::small_vector<std::int64_t, 7>;

// The work one operator does, independent of where and when it runs: everything a cost model
// needs. Graphs intern these, so identical layers share one entry and are costed once per device.
struct OpWork {
  OpClass op_class = OpClass::other;
  Dtype dtype = Dtype::bf16;
  Kernel kernel = Kernel::any;  // the implementation, where a cost model tells them apart
  double flops = 0.0;
  Bytes memory_bytes = 0;   // bytes read and written in device memory
  Bytes network_bytes = 0;  // bytes sent over the op's link or network
  WorkShape shape;          // op-class specific, e.g. {M, N, K} for a GEMM
  // For communication ops: the communicator (1-based index into the cost model's group table)
  // whose placement sets the cost; 0 for ops costed by the device alone.
  std::uint32_t comm_group = 0;
  // SMs another kernel holds while this one runs, which it cannot use (Transformer Engine's
  // userbuffer SM margin; NCCL's collective kernels, averaged over the ops they overlap, hence
  // fractional); compute ops only.
  double reserved_sms = 0.0;

  std::span<const std::int64_t> dims() const { return {shape.data(), shape.size()}; }

  bool operator==(const OpWork&) const = default;
};

struct OpWorkHash {
  std::size_t operator()(const OpWork& work) const noexcept;
};

}  // namespace weft
