#include <catch2/catch.hpp>

#include "kernels/kernel_op.hpp"
#include "simulator/core/input_error.hpp"
#include "simulator/workload/modules/op_factory.hpp"

namespace weft {
namespace {

TEST_CASE("simulator ops map to the kernels that run them", "[kernels]") {
  const KernelOp gemm = kernel_op_for(gemm_work(256, 768, 512, Dtype::bf16));
  CHECK(gemm.kind == KernelKind::gemm);
  CHECK(gemm.read_bytes() == (256 * 512 + 512 * 768) * 2);
  CHECK(gemm.write_bytes() == 256 * 768 * 2);
  CHECK(gemm.gemm.layout == GemmLayout::nn);
  // A linear layer's GEMMs run in the layouts their kernels name.
  CHECK(kernel_op_for(gemm_work(256, 768, 512, Dtype::bf16, Kernel::nt)).gemm.layout == GemmLayout::nt);
  CHECK(kernel_op_for(gemm_work(256, 768, 512, Dtype::bf16, Kernel::tn)).gemm.layout == GemmLayout::tn);
  for (GemmLayout layout : {GemmLayout::nn, GemmLayout::nt, GemmLayout::tn}) {
    CHECK(gemm_layout_of(kernel_of(layout)) == layout);
  }

  OpWork attention = memory_bound_work(OpClass::attention_bwd, 0, 1.0, Dtype::bf16, {2, 4, 64, 64, 32, 1});
  const KernelOp backward = kernel_op_for(attention);
  CHECK(backward.kind == KernelKind::attention_backward);
  CHECK(backward.attention.batch == 2);
  CHECK(backward.attention.causal);
  CHECK(backward.attention.key_heads() == 4);
  // Grouped-query: a seventh dimension, the key and value heads; K and V are a quarter of Q.
  const KernelOp grouped =
      kernel_op_for(memory_bound_work(OpClass::attention_fwd, 0, 1.0, Dtype::bf16, {2, 4, 64, 64, 32, 1, 1}));
  CHECK(grouped.attention.key_heads() == 1);
  CHECK(grouped.attention.key_bytes() * 4 == grouped.attention.query_bytes());
  CHECK(grouped.read_bytes() == grouped.attention.query_bytes() * 3 / 2);
  CHECK_THROWS_WITH(
      kernel_op_for(memory_bound_work(OpClass::attention_fwd, 0, 1.0, Dtype::bf16, {2, 4, 64, 64, 32, 1, 3})),
      Catch::Contains("kv_heads must divide heads (4), got 3"));

  // A norm's forward over 256 x 512 bf16 values moves 2 x 256 x 512 x 2 bytes: it writes its
  // shape and reads the rest; 5 operations per element.
  const KernelOp norm =
      kernel_op_for(memory_bound_work(OpClass::norm, 2 * 256 * 512 * 2, 5.0 * 256 * 512, Dtype::bf16, {256, 512}));
  CHECK(norm.kind == KernelKind::memory_bound);
  CHECK(norm.memory.outputs == 256 * 512);
  CHECK(norm.memory.inputs == 256 * 512);
  CHECK(norm.memory.flops_per_output == 5);
  CHECK(norm.read_bytes() + norm.write_bytes() == 2 * 256 * 512 * 2);

  // Without a shape, half the bytes are written.
  const KernelOp bare = kernel_op_for(memory_bound_work(OpClass::optimizer, 4000, 0.0, Dtype::fp32));
  CHECK(bare.memory.outputs == 500);
  CHECK(bare.memory.inputs == 500);

  OpWork barrier;
  barrier.op_class = OpClass::barrier;
  CHECK(kernel_op_for(barrier).kind == KernelKind::none);
  CHECK_THROWS_AS(kernel_op_for(communication_work(OpClass::allreduce, 8)), InputError);
  CHECK_THROWS_WITH(kernel_op_for(memory_bound_work(OpClass::gemm, 8, 1.0, Dtype::bf16, {2, 2})),
                    Catch::Contains("gemm [2, 2]: expected a shape of 3 dimensions"));
}

}  // namespace
}  // namespace weft
