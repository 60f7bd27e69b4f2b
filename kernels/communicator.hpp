#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "simulator/core/dtype.hpp"
#include "simulator/core/op_class.hpp"

namespace weft {

// One communication op. Sizes follow nccl-tests (docs/collectives.md): an all-reduce or broadcast
// moves `bytes` on every rank; all-gather's `bytes` is the gathered output (each rank contributes
// bytes / size); reduce-scatter's the full input (each rank keeps bytes / size); all-to-all's what
// each rank holds; send and recv move `bytes` to or from `peer`, matched by `tag`.
struct CommOp {
  OpClass op_class = OpClass::allreduce;
  std::int64_t bytes = 0;
  Dtype dtype = Dtype::bf16;
  int peer = -1;
  int tag = 0;
  // Issued on the backend's compute stream, so that later kernels wait for it; otherwise on a
  // communication stream of its own, overlapping them (GPU; on the CPU both are the same).
  bool on_compute_stream = false;
};

// One op of a group: what to start and the buffers it reads and writes.
struct GroupedOp {
  CommOp op;
  const std::byte* send = nullptr;
  std::byte* recv = nullptr;
};

// A communication op under way.
class Request {
 public:
  virtual ~Request() = default;
  // Whether the op has completed; lets it progress.
  virtual bool test() = 0;
  // Makes later compute wait for the op: on the CPU by waiting for it here (throws a runtime
  // error naming the op when `deadline` passes first), on a GPU by ordering the streams.
  virtual void order_before_compute(std::chrono::steady_clock::time_point deadline) = 0;
};

// One request for several (a transfer's messages to each of its peers): complete when every part
// is. A single part comes back as it is.
std::unique_ptr<Request> all_of(std::vector<std::unique_ptr<Request>> parts);

// `first`, then the request `next` starts once `first` has completed (seen by a test or a wait):
// a relay's second phase, which hands on what the first gathered.
std::unique_ptr<Request> then(std::unique_ptr<Request> first, std::function<std::unique_ptr<Request>()> next);

// Ranks that communicate. Collective calls (split, start of a collective) must be made by every
// member in the same order.
class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;

  // The members with the same `color` form a new communicator, ranked by `key`; a negative
  // color leaves the caller out (nullptr).
  virtual std::unique_ptr<Communicator> split(int color, int key) = 0;

  // Starts `op` reading `send` and writing `recv` (device memory of the backend, each at least
  // the bytes the op reads or writes on this rank).
  virtual std::unique_ptr<Request> start(const CommOp& op, const std::byte* send, std::byte* recv) = 0;
  // Starts `ops` together, one request each in their order: on a GPU as one NCCL group, so that
  // point-to-point ops two ranks issue in different orders cannot deadlock (Megatron batches a
  // pipeline step's sends and receives so); by default one after the other.
  virtual std::vector<std::unique_ptr<Request>> start_group(const std::vector<GroupedOp>& ops);

  // Every member's `bytes` at `data` on `root` copied to the others (host memory).
  virtual void broadcast_host(std::byte* data, std::int64_t bytes, int root) = 0;
  // The largest of every member's `value`, on every member.
  virtual double max_host(double value) = 0;
  // Every member's bytes (of any length) in rank order, on `root` (empty elsewhere).
  virtual std::vector<std::vector<std::byte>> gather_host(const std::vector<std::byte>& data, int root) = 0;
  virtual void barrier() = 0;
};

// Bytes an op reads from `send` and writes to `recv` on one rank of `size`.
std::int64_t comm_send_bytes(const CommOp& op, int size);
std::int64_t comm_recv_bytes(const CommOp& op, int size);

}  // namespace weft
