#include "tests/support/naive_attention.hpp"

#include <cmath>
#include <functional>
#include <random>

namespace weft::test {
namespace {

// The key and value slice query slice s (batch x heads + head) reads.
long key_slice(const AttentionShape& shape, long s) {
  return s / shape.heads * shape.key_heads() + s % shape.heads / shape.group();
}

}  // namespace

NaiveAttention naive_attention_forward(const AttentionShape& shape, const std::vector<double>& q,
                                       const std::vector<double>& k, const std::vector<double>& v) {
  const long d = shape.head_dim;
  const long offset = shape.keys - shape.queries;
  NaiveAttention out;
  out.o.assign(q.size(), 0.0);
  out.lse.assign(static_cast<std::size_t>(shape.batch * shape.heads * shape.queries), 0.0);
  for (long s = 0; s < shape.batch * shape.heads; ++s) {
    for (long i = 0; i < shape.queries; ++i) {
      const long visible = shape.causal ? std::min(shape.keys, i + offset + 1) : shape.keys;
      std::vector<double> score(static_cast<std::size_t>(visible));
      double top = -INFINITY;
      for (long j = 0; j < visible; ++j) {
        double dot = 0.0;
        for (long c = 0; c < d; ++c)
          dot += q[static_cast<std::size_t>((s * shape.queries + i) * d + c)] *
                 k[static_cast<std::size_t>((key_slice(shape, s) * shape.keys + j) * d + c)];
        score[static_cast<std::size_t>(j)] = dot / std::sqrt(static_cast<double>(d));
        top = std::max(top, score[static_cast<std::size_t>(j)]);
      }
      double sum = 0.0;
      for (double& x : score) sum += (x = std::exp(x - top));
      for (long j = 0; j < visible; ++j) {
        for (long c = 0; c < d; ++c) {
          out.o[static_cast<std::size_t>((s * shape.queries + i) * d + c)] +=
              score[static_cast<std::size_t>(j)] / sum *
              v[static_cast<std::size_t>((key_slice(shape, s) * shape.keys + j) * d + c)];
        }
      }
      out.lse[static_cast<std::size_t>(s * shape.queries + i)] = top + std::log(sum);
    }
  }
  return out;
}

NaiveGradients naive_attention_backward(const AttentionShape& shape, const std::vector<double>& q,
                                        const std::vector<double>& k, const std::vector<double>& v,
                                        const std::vector<double>& d_o) {
  const long d = shape.head_dim;
  const long offset = shape.keys - shape.queries;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const NaiveAttention forward = naive_attention_forward(shape, q, k, v);
  NaiveGradients g{std::vector<double>(q.size()), std::vector<double>(k.size()), std::vector<double>(v.size())};
  auto at = [d](long row, long c) { return static_cast<std::size_t>(row * d + c); };
  for (long s = 0; s < shape.batch * shape.heads; ++s) {
    for (long i = 0; i < shape.queries; ++i) {
      const long qi = s * shape.queries + i;
      const long visible = shape.causal ? std::min(shape.keys, i + offset + 1) : shape.keys;
      std::vector<double> p(static_cast<std::size_t>(visible)), dp(static_cast<std::size_t>(visible));
      double p_dot_dp = 0.0;
      for (long j = 0; j < visible; ++j) {
        const long kj = key_slice(shape, s) * shape.keys + j;
        double score = 0.0, grad = 0.0;
        for (long c = 0; c < d; ++c) {
          score += q[at(qi, c)] * k[at(kj, c)];
          grad += d_o[at(qi, c)] * v[at(kj, c)];
        }
        p[static_cast<std::size_t>(j)] = std::exp(score * scale - forward.lse[static_cast<std::size_t>(qi)]);
        dp[static_cast<std::size_t>(j)] = grad;
        p_dot_dp += p[static_cast<std::size_t>(j)] * grad;
      }
      for (long j = 0; j < visible; ++j) {
        const long kj = key_slice(shape, s) * shape.keys + j;
        const double pj = p[static_cast<std::size_t>(j)];
        const double ds = pj * (dp[static_cast<std::size_t>(j)] - p_dot_dp);
        for (long c = 0; c < d; ++c) {
          g.d_v[at(kj, c)] += pj * d_o[at(qi, c)];
          g.d_q[at(qi, c)] += ds * k[at(kj, c)] * scale;
          g.d_k[at(kj, c)] += ds * q[at(qi, c)] * scale;
        }
      }
    }
  }
  return g;
}

namespace {

double loss(const AttentionShape& shape, const std::vector<double>& q, const std::vector<double>& k,
            const std::vector<double>& v, const std::vector<double>& d_o) {
  const std::vector<double> o = naive_attention_forward(shape, q, k, v).o;
  double sum = 0.0;
  for (std::size_t i = 0; i < o.size(); ++i) sum += o[i] * d_o[i];
  return sum;
}

// d loss / d x[i] for every i, perturbing x in place.
std::vector<double> central_differences(std::vector<double>& x, const std::function<double()>& f) {
  constexpr double kStep = 1e-5;
  std::vector<double> gradient(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double saved = x[i];
    x[i] = saved + kStep;
    const double up = f();
    x[i] = saved - kStep;
    const double down = f();
    x[i] = saved;
    gradient[i] = (up - down) / (2 * kStep);
  }
  return gradient;
}

}  // namespace

NaiveGradients finite_difference_gradients(const AttentionShape& shape, const std::vector<double>& q,
                                           const std::vector<double>& k, const std::vector<double>& v,
                                           const std::vector<double>& d_o) {
  std::vector<double> q_copy = q, k_copy = k, v_copy = v;
  auto f = [&] { return loss(shape, q_copy, k_copy, v_copy, d_o); };
  NaiveGradients g;
  g.d_q = central_differences(q_copy, f);
  g.d_k = central_differences(k_copy, f);
  g.d_v = central_differences(v_copy, f);
  return g;
}

std::vector<double> random_values(std::size_t count, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> values(count);
  for (double& x : values) x = uniform(generator);
  return values;
}

}  // namespace weft::test
