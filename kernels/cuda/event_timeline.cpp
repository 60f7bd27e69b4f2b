#include "kernels/cuda/event_timeline.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <stdexcept>

#include "kernels/cuda/cuda_errors.hpp"

namespace weft::cuda {
namespace {

std::int64_t host_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

EventTimeline::EventTimeline(cudaStream_t compute, std::string why) : compute_(compute), why_(std::move(why)) {}

EventTimeline::~EventTimeline() {
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
}

cudaEvent_t EventTimeline::event() {
  if (used_ == events_.size()) {
    cudaEvent_t e = nullptr;
    check_cuda(cudaEventCreate(&e), "cudaEventCreate(span timing)");
    events_.push_back(e);
  }
  return events_[used_++];
}

void EventTimeline::push(std::uint32_t id) {
  if (origin_ == nullptr) {
    origin_ = event();
    origin_host_ns_ = host_now_ns();
    check_cuda(cudaEventRecord(origin_, compute_), "cudaEventRecord(span origin)");
  }
  OpenSpan span{id, event(), nullptr};
  check_cuda(cudaEventRecord(span.start, compute_), "cudaEventRecord(span start)");
  spans_.push_back(span);
}

void EventTimeline::pop() {
  if (spans_.empty() || spans_.back().end != nullptr) throw std::logic_error("EventTimeline::pop without push");
  spans_.back().end = event();
  check_cuda(cudaEventRecord(spans_.back().end, compute_), "cudaEventRecord(span end)");
}

std::vector<TimedSpan> EventTimeline::collect() {
  std::vector<TimedSpan> out;
  auto since_origin = [&](cudaEvent_t e) {
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, origin_, e), "cudaEventElapsedTime");
    return origin_host_ns_ + std::llround(static_cast<double>(ms) * 1e6);
  };
  std::map<std::uint32_t, std::size_t> index;  // a span opened again: one span from first start to last end
  for (const OpenSpan& span : spans_) {
    if (span.end == nullptr) throw std::logic_error("EventTimeline::collect with a span still open");
    const std::int64_t start = since_origin(span.start);
    const std::int64_t end = since_origin(span.end);
    const auto [it, added] = index.try_emplace(span.id, out.size());
    if (added) {
      out.push_back({span.id, start, end, end - start});  // events see no gaps between kernels
      continue;
    }
    TimedSpan& merged = out[it->second];
    merged.start_ns = std::min(merged.start_ns, start);
    merged.end_ns = std::max(merged.end_ns, end);
    merged.busy_ns += end - start;
  }
  spans_.clear();
  used_ = 0;
  origin_ = nullptr;
  return out;
}

}  // namespace weft::cuda
