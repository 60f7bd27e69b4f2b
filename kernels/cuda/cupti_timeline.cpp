#include "kernels/cuda/cupti_timeline.hpp"

#include <cupti.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace weft::cuda {
namespace {

constexpr std::size_t kBufferBytes = 8 << 20;
constexpr std::size_t kBufferAlignment = 8;

void check_cupti(CUptiResult status, const char* what) {
  if (status == CUPTI_SUCCESS) return;
  const char* text = "unknown error";
  cuptiGetResultString(status, &text);
  throw std::runtime_error(std::string(what) + " failed: " + text);
}

// What CUPTI has delivered: kernel intervals by CUPTI correlation id, and which external id
// (span) each correlation id was issued under. CUPTI calls back from its own threads.
struct Records {
  std::mutex mutex;
  std::unordered_map<std::uint32_t, std::pair<std::uint64_t, std::uint64_t>> intervals;
  std::unordered_map<std::uint32_t, std::uint64_t> span_of;
};

Records& records() {
  static Records instance;
  return instance;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, kBufferBytes));
  *size = kBufferBytes;
  *max_records = 0;
}

void widen_interval(std::uint32_t correlation, std::uint64_t start, std::uint64_t end) {
  auto [it, inserted] = records().intervals.try_emplace(correlation, start, end);
  if (!inserted) {
    it->second.first = std::min(it->second.first, start);
    it->second.second = std::max(it->second.second, end);
  }
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  {
    std::lock_guard<std::mutex> lock(records().mutex);
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
      if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
        const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        widen_interval(kernel->correlationId, kernel->start, kernel->end);
      } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
        const auto* memset = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
        widen_interval(memset->correlationId, memset->start, memset->end);
      } else if (record->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
        const auto* link = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
        records().span_of[link->correlationId] = link->externalId;
      }
    }
  }
  std::free(buffer);
}

}  // namespace

CuptiTimeline::CuptiTimeline() {
  check_cupti(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "cuptiActivityRegisterCallbacks");
  check_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "cuptiActivityEnable(kernel)");
  check_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), "cuptiActivityEnable(memset)");
  check_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION), "cuptiActivityEnable(correlation)");
}

CuptiTimeline::~CuptiTimeline() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
}

void CuptiTimeline::push(std::uint32_t id) {
  check_cupti(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id),
              "cuptiActivityPushExternalCorrelationId");
}

void CuptiTimeline::pop() {
  std::uint64_t last = 0;
  check_cupti(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last),
              "cuptiActivityPopExternalCorrelationId");
}

std::vector<TimedSpan> CuptiTimeline::collect() {
  check_cupti(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
  Records& all = records();
  std::lock_guard<std::mutex> lock(all.mutex);
  std::map<std::uint64_t, TimedSpan> spans;
  for (const auto& [correlation, interval] : all.intervals) {
    const auto span = all.span_of.find(correlation);
    if (span == all.span_of.end()) continue;
    const auto start = static_cast<std::int64_t>(interval.first);
    const auto end = static_cast<std::int64_t>(interval.second);
    auto [it, inserted] =
        spans.try_emplace(span->second, TimedSpan{static_cast<std::uint32_t>(span->second), start, end});
    if (!inserted) {
      it->second.start_ns = std::min(it->second.start_ns, start);
      it->second.end_ns = std::max(it->second.end_ns, end);
    }
  }
  all.intervals.clear();
  all.span_of.clear();
  std::vector<TimedSpan> out;
  for (const auto& [id, span] : spans) out.push_back(span);
  return out;
}

std::int64_t CuptiTimeline::now_ns() {
  std::uint64_t timestamp = 0;
  check_cupti(cuptiGetTimestamp(&timestamp), "cuptiGetTimestamp");
  return static_cast<std::int64_t>(timestamp);
}

}  // namespace weft::cuda
