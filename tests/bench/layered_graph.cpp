#include "tests/bench/layered_graph.hpp"

#include <string>
#include <vector>

#include "simulator/graph/graph_builder.hpp"

namespace weft::bench {

Graph make_layered_graph(std::int64_t op_count, int width) {
  GraphBuilder builder;
  DeviceSpec spec;
  spec.name = "bench-gpu";
  spec.peak_flops.fill(1e15);
  spec.memory_bandwidth = 3e12;
  spec.network_bandwidth = 4.5e11;
  spec.memory_capacity = Bytes{80} << 30;
  const DeviceSpecId spec_id = builder.add_device_spec(spec);
  std::vector<StreamId> compute;
  std::vector<StreamId> comm;
  for (int d = 0; d < width; ++d) {
    const DeviceId device = builder.add_device("gpu" + std::to_string(d), spec_id);
    compute.push_back(builder.add_stream(device, "compute"));
    comm.push_back(builder.add_stream(device, "comm"));
  }
  std::vector<WorkId> gemms;
  for (int k = 1; k <= 4; ++k) {
    OpWork work;
    work.op_class = OpClass::gemm;
    work.flops = 1e9 * k;
    work.memory_bytes = 1 << 20;
    gemms.push_back(builder.intern_work(work));
  }
  OpWork send;
  send.op_class = OpClass::send;
  send.network_bytes = 1 << 22;
  const WorkId send_work = builder.intern_work(send);

  const std::int64_t layers = op_count / width;
  std::vector<TensorId> previous(static_cast<std::size_t>(width));
  std::vector<TensorId> current(static_cast<std::size_t>(width));
  for (std::int64_t layer = 0; layer < layers; ++layer) {
    for (int d = 0; d < width; ++d) {
      const bool communicates = layer % 8 == 7;
      const OpId op = communicates ? builder.add_op(NameId::none(), send_work, comm[static_cast<std::size_t>(d)])
                                   : builder.add_op(NameId::none(), gemms[static_cast<std::size_t>((layer + d) % 4)],
                                                    compute[static_cast<std::size_t>(d)]);
      if (layer > 0) {
        builder.add_input(op, previous[static_cast<std::size_t>(d)]);
        builder.add_input(op, previous[static_cast<std::size_t>((d + 1) % width)]);
      }
      const TensorId out =
          builder.add_tensor({}, DeviceId(static_cast<DeviceId::value_type>(d)), TensorKind::activation, 1 << 20);
      builder.add_output(op, out);
      current[static_cast<std::size_t>(d)] = out;
    }
    std::swap(previous, current);
  }
  return std::move(builder).build();
}

}  // namespace weft::bench
