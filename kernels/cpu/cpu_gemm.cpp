#include "kernels/cpu/cpu_gemm.hpp"

#include <Eigen/Core>

#include "kernels/cpu/element_conversion.hpp"

namespace weft::cpu {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// C = op(A) op(B) for A and B as stored (row-major, transposed where the layout says).
template <class A, class B, class C>
void multiply(GemmLayout layout, const A& a, const B& b, C& c) {
  switch (layout) {
    case GemmLayout::nn:
      c.noalias() = a * b;
      return;
    case GemmLayout::nt:
      c.noalias() = a * b.transpose();
      return;
    case GemmLayout::tn:
      c.noalias() = a.transpose() * b;
      return;
  }
}

}  // namespace

void gemm(const GemmShape& shape, const std::byte* a, const std::byte* b, std::byte* c) {
  const Eigen::Index a_rows = shape.a_transposed() ? shape.k : shape.m;
  const Eigen::Index a_cols = shape.a_transposed() ? shape.m : shape.k;
  const Eigen::Index b_rows = shape.b_transposed() ? shape.n : shape.k;
  const Eigen::Index b_cols = shape.b_transposed() ? shape.k : shape.n;
  if (shape.dtype == Dtype::fp32) {
    const Eigen::Map<const RowMatrix> a_matrix(reinterpret_cast<const float*>(a), a_rows, a_cols);
    const Eigen::Map<const RowMatrix> b_matrix(reinterpret_cast<const float*>(b), b_rows, b_cols);
    Eigen::Map<RowMatrix> c_matrix(reinterpret_cast<float*>(c), shape.m, shape.n);
    multiply(shape.layout, a_matrix, b_matrix, c_matrix);
    return;
  }
  RowMatrix a_matrix(a_rows, a_cols);
  RowMatrix b_matrix(b_rows, b_cols);
  widen(shape.dtype, a, a_matrix.data(), a_matrix.size());
  widen(shape.dtype, b, b_matrix.data(), b_matrix.size());
  RowMatrix c_matrix(shape.m, shape.n);
  multiply(shape.layout, a_matrix, b_matrix, c_matrix);
  narrow(shape.dtype, c_matrix.data(), c, c_matrix.size());
}

}  // namespace weft::cpu
