#include "kernels/cpu/cpu_gemm.hpp"

#include <Eigen/Core>

#include "kernels/cpu/element_conversion.hpp"

namespace weft::cpu {

void gemm(const GemmShape& shape, const std::byte* a, const std::byte* b, std::byte* c) {
  using Matrix = Eigen::MatrixXf;
  if (shape.dtype == Dtype::fp32) {
    const Eigen::Map<const Matrix> a_matrix(reinterpret_cast<const float*>(a), shape.m, shape.k);
    const Eigen::Map<const Matrix> b_matrix(reinterpret_cast<const float*>(b), shape.k, shape.n);
    Eigen::Map<Matrix> c_matrix(reinterpret_cast<float*>(c), shape.m, shape.n);
    c_matrix.noalias() = a_matrix * b_matrix;
    return;
  }
  Matrix a_matrix(shape.m, shape.k);
  Matrix b_matrix(shape.k, shape.n);
  widen(shape.dtype, a, a_matrix.data(), a_matrix.size());
  widen(shape.dtype, b, b_matrix.data(), b_matrix.size());
  Matrix c_matrix(shape.m, shape.n);
  c_matrix.noalias() = a_matrix * b_matrix;
  narrow(shape.dtype, c_matrix.data(), c, c_matrix.size());
}

}  // namespace weft::cpu
