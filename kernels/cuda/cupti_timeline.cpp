#include "kernels/cuda/cupti_timeline.hpp"

#include <cupti.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include <fmt/format.h>

#include "kernels/cuda/event_timeline.hpp"

namespace weft::cuda {
namespace {

constexpr std::size_t kBufferBytes = 8 << 20;
constexpr std::size_t kBufferAlignment = 8;

std::string result_text(CUptiResult status) {
  const char* text = "unknown error";
  cuptiGetResultString(status, &text);
  return text;
}

void check_cupti(CUptiResult status, const char* what) {
  if (status != CUPTI_SUCCESS) throw std::runtime_error(std::string(what) + " failed: " + result_text(status));
}

// CUPTI writes an external correlation record only for API calls whose activity records are
// enabled, and only when their activity kind is (an API enabled alone by its callback id gets no
// correlation record). So both API kinds are enabled, then every call is disabled again but those
// that put work on a stream, through the runtime (weft's own kernels) or straight through the
// driver (cuBLASLt and NCCL launch that way).
constexpr std::array kRuntimeLaunches = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
};
constexpr std::array kDriverLaunches = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD16Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD16Async_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
};

// What CUPTI has delivered, and the activity buffers it has handed back; it calls back from its
// own threads. Buffers are reused rather than freed: a fresh 8 MiB allocation faults its pages in
// as CUPTI first writes them, about a millisecond the device waits for at the next launch.
struct Records {
  std::mutex mutex;
  KernelRecordMatcher matcher;
  std::vector<std::uint8_t*> spare_buffers;
  ~Records() {
    for (std::uint8_t* buffer : spare_buffers) std::free(buffer);
  }
};

Records& records() {
  static Records instance;
  return instance;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  {
    std::lock_guard<std::mutex> lock(records().mutex);
    auto& spare = records().spare_buffers;
    if (!spare.empty()) {
      *buffer = spare.back();
      spare.pop_back();
    } else {
      *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, kBufferBytes));
      std::memset(*buffer, 0, kBufferBytes);  // its pages faulted in now, not while CUPTI records
    }
  }
  *size = kBufferBytes;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  {
    std::lock_guard<std::mutex> lock(records().mutex);
    KernelRecordMatcher& matcher = records().matcher;
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
      if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
        const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        matcher.add_interval(kernel->correlationId, kernel->start, kernel->end);
      } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
        const auto* memset = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
        matcher.add_interval(memset->correlationId, memset->start, memset->end);
      } else if (record->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
        const auto* link = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
        matcher.add_link(link->correlationId, link->externalId);
      }
    }
    records().spare_buffers.push_back(buffer);
  }
}

template <class Ids>
bool listed(const Ids& ids, CUpti_CallbackId id) {
  return std::any_of(ids.begin(), ids.end(),
                     [id](auto listed_id) { return static_cast<CUpti_CallbackId>(listed_id) == id; });
}

// API records for the launches only: the kinds on, every other call off. A call CUPTI refuses to
// turn off (an id this CUPTI does not know) only costs records, so its status is not checked.
void enable_launch_records() {
  check_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), "cuptiActivityEnable(runtime)");
  check_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER), "cuptiActivityEnable(driver)");
  for (CUpti_CallbackId id = 1; id < CUPTI_RUNTIME_TRACE_CBID_SIZE; ++id) {
    if (!listed(kRuntimeLaunches, id)) cuptiActivityEnableRuntimeApi(id, 0);
  }
  for (CUpti_CallbackId id = 1; id < CUPTI_DRIVER_TRACE_CBID_SIZE; ++id) {
    if (!listed(kDriverLaunches, id)) cuptiActivityEnableDriverApi(id, 0);
  }
}

}  // namespace

CuptiTimeline::CuptiTimeline() {
  const CUptiResult registered = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  if (registered != CUPTI_SUCCESS) throw CuptiUnavailable("CUPTI: " + result_text(registered));
  check_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "cuptiActivityEnable(kernel)");
  check_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), "cuptiActivityEnable(memset)");
  check_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION), "cuptiActivityEnable(correlation)");
  enable_launch_records();
}

CuptiTimeline::~CuptiTimeline() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
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
  std::lock_guard<std::mutex> lock(records().mutex);
  return records().matcher.take();
}

std::string CuptiTimeline::unattributed() const {
  std::lock_guard<std::mutex> lock(records().mutex);
  const KernelRecordMatcher& m = records().matcher;
  return fmt::format(
      "; CUPTI delivered {} kernel record{} without a launch record and {} launch record{} without a kernel",
      m.pending_intervals(), m.pending_intervals() == 1 ? "" : "s", m.pending_links(),
      m.pending_links() == 1 ? "" : "s");
}

std::unique_ptr<KernelTimeline> make_kernel_timeline(cudaStream_t compute) {
  try {
    return std::make_unique<CuptiTimeline>();
  } catch (const CuptiUnavailable& e) {
    return std::make_unique<EventTimeline>(compute, e.what());
  }
}

}  // namespace weft::cuda
