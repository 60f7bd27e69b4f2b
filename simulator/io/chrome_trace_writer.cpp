#include "simulator/io/chrome_trace_writer.hpp"

#include <fmt/format.h>

#include "simulator/core/format_units.hpp"
#include "simulator/core/version.hpp"
#include "simulator/engine/expanded_ops.hpp"
#include "simulator/graph/flatten.hpp"

namespace weft {
namespace {

// Chrome reserves no ids, but pid 0 reads as "no process" in some viewers: ids start at 1.
std::uint32_t trace_pid(DeviceId device) { return device.value() + 1; }
std::uint32_t trace_tid(StreamId stream) { return stream.value() + 1; }

void append_json_string(fmt::memory_buffer& out, std::string_view text) {
  out.push_back('"');
  for (char c : text) {
    switch (c) {
      case '"':
        fmt::format_to(std::back_inserter(out), "\\\"");
        break;
      case '\\':
        fmt::format_to(std::back_inserter(out), "\\\\");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

class TraceEmitter {
 public:
  explicit TraceEmitter(std::ostream& out) : out_(out) {}

  // Starts the next event: a separator, then the caller appends one JSON object to buffer().
  fmt::memory_buffer& next() {
    if (count_++ > 0) buffer_.push_back(',');
    buffer_.push_back('\n');
    if (buffer_.size() > (1 << 20)) flush();
    return buffer_;
  }

  void flush() {
    out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    buffer_.clear();
  }

 private:
  std::ostream& out_;
  fmt::memory_buffer buffer_;
  std::size_t count_ = 0;
};

void write_metadata(TraceEmitter& emit, const Graph& graph) {
  for (std::size_t d = 0; d < graph.device_count(); ++d) {
    const DeviceId device(static_cast<DeviceId::value_type>(d));
    auto& out = emit.next();
    fmt::format_to(std::back_inserter(out), R"({{"name":"process_name","ph":"M","pid":{},"tid":0,"args":{{"name":)",
                   trace_pid(device));
    append_json_string(out, graph.device(device).name + " (" + graph.device_spec(device).name + ")");
    fmt::format_to(std::back_inserter(out), "}}}}");
    fmt::format_to(std::back_inserter(emit.next()),
                   R"({{"name":"process_sort_index","ph":"M","pid":{},"tid":0,"args":{{"sort_index":{}}}}})",
                   trace_pid(device), d);
  }
  for (std::size_t s = 0; s < graph.stream_count(); ++s) {
    const StreamId stream(static_cast<StreamId::value_type>(s));
    const StreamInfo& info = graph.stream(stream);
    auto& out = emit.next();
    fmt::format_to(std::back_inserter(out), R"({{"name":"thread_name","ph":"M","pid":{},"tid":{},"args":{{"name":)",
                   trace_pid(info.device), trace_tid(stream));
    append_json_string(out, info.name);
    fmt::format_to(std::back_inserter(out), "}}}}");
    fmt::format_to(std::back_inserter(emit.next()),
                   R"({{"name":"thread_sort_index","ph":"M","pid":{},"tid":{},"args":{{"sort_index":{}}}}})",
                   trace_pid(info.device), trace_tid(stream), s);
  }
}

void write_op(TraceEmitter& emit, const Graph& graph, const SimulationResult& result, OpId op) {
  const OpWork& work = graph.op_work(op);
  auto& out = emit.next();
  out.append(std::string_view(R"({"name":)"));
  append_json_string(out, graph.display_name(op));
  fmt::format_to(std::back_inserter(out),
                 R"(,"cat":"{}","ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"args":{{"class":"{}","dtype":"{}",)"
                 R"("flops":{},"memory_bytes":{},"network_bytes":{},"shape":[{}])",
                 kOpClassNames.name(work.op_class), trace_pid(graph.op_device(op)), trace_tid(graph.op_stream(op)),
                 format_trace_microseconds(result.start(op)), format_trace_microseconds(result.duration(op)),
                 kOpClassNames.name(work.op_class), kDtypeNames.name(work.dtype), work.flops, work.memory_bytes,
                 work.network_bytes, fmt::join(work.shape, ","));
  if (work.kernel != Kernel::any)
    fmt::format_to(std::back_inserter(out), R"(,"kernel":"{}")", kKernelNames.name(work.kernel));
  if (const CollectiveId collective = graph.op_collective(op); collective.valid()) {
    out.append(std::string_view(R"(,"collective":)"));
    append_json_string(out, graph.collective_name(collective));
  }
  out.append(std::string_view("}}"));
}

// A flow arrow from `from` (bound to its span) to the span of `to`, for edges across devices.
void write_flow(TraceEmitter& emit, const Graph& graph, const SimulationResult& result, OpId from, OpId to,
                std::size_t id) {
  fmt::format_to(std::back_inserter(emit.next()),
                 R"({{"name":"dependency","cat":"dependency","ph":"s","id":{},"pid":{},"tid":{},"ts":{}}})", id,
                 trace_pid(graph.op_device(from)), trace_tid(graph.op_stream(from)),
                 format_trace_microseconds(result.start(from)));
  fmt::format_to(std::back_inserter(emit.next()),
                 R"({{"name":"dependency","cat":"dependency","ph":"f","bp":"e","id":{},"pid":{},"tid":{},"ts":{}}})",
                 id, trace_pid(graph.op_device(to)), trace_tid(graph.op_stream(to)),
                 format_trace_microseconds(result.start(to)));
}

void write_memory_counters(TraceEmitter& emit, const SimulationResult& result) {
  for (std::size_t d = 0; d < result.devices.size(); ++d) {
    const DeviceId device(static_cast<DeviceId::value_type>(d));
    for (const MemoryPoint& point : result.devices[d].memory_timeline) {
      fmt::format_to(std::back_inserter(emit.next()),
                     R"({{"name":"memory","ph":"C","pid":{},"ts":{},"args":{{"bytes":{}}}}})", trace_pid(device),
                     format_trace_microseconds(point.time), point.bytes);
    }
  }
}

// The result told for `flat`, the expansion of the simulated graph: every op at its time.
SimulationResult expanded_result(const Graph& graph, const FlatGraph& flat, const SimulationResult& result) {
  SimulationResult expanded;
  expanded.makespan = result.makespan;
  expanded.devices = result.devices;
  expanded.op_start.reserve(flat.graph.op_count());
  expanded.op_end.reserve(flat.graph.op_count());
  for_each_expanded_op(graph, result, [&](const ExpandedOp& op) {
    expanded.op_start.push_back(op.start);
    expanded.op_end.push_back(op.end);
  });
  expanded.op_binding.assign(flat.graph.op_count(), OpId::none());
  return expanded;
}

}  // namespace

void write_chrome_trace(std::ostream& out, const Graph& graph, const SimulationResult& result) {
  if (graph.composite_count() > 0) {
    // Composite ops show as the ops of their templates.
    const FlatGraph flat = flatten(graph);
    write_chrome_trace(out, flat.graph, expanded_result(graph, flat, result));
    return;
  }
  out << R"({"displayTimeUnit":"ns","otherData":{"generator":"weft )" << version() << R"(","makespan_ns":)"
      << result.makespan << R"(},"traceEvents":[)";
  TraceEmitter emit(out);
  write_metadata(emit, graph);
  std::size_t flow_id = 0;
  for (std::size_t i = 0; i < graph.op_count(); ++i) {
    const OpId op(static_cast<OpId::value_type>(i));
    write_op(emit, graph, result, op);
    const DeviceId device = graph.op_device(op);
    graph.for_each_successor(op, [&](OpId successor) {
      if (graph.op_device(successor) != device) write_flow(emit, graph, result, op, successor, ++flow_id);
    });
  }
  write_memory_counters(emit, result);
  emit.flush();
  out << "\n]}\n";
}

}  // namespace weft
