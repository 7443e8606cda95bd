// What the toy key tests compare keys by: a fingerprint of everything a
// key file holds (FNV-1a over the points' bytes and the coefficients'
// fields, which skips MatrixEntry's padding), and a byte-for-byte check
// that names the first query and point where two keys differ.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "engine/groth16/proving_key.hpp"

namespace stoker::engine::groth16::test {

class Fnv1a {
 public:
  void add(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) h_ = (h_ ^ p[i]) * 0x100000001b3ull;
  }
  template <typename T, typename A>
  void add_vector(const std::vector<T, A>& v) {
    const std::uint64_t n = v.size();
    add(&n, sizeof n);
    add(v.data(), v.size() * sizeof(T));
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ull;
};

inline std::uint64_t key_fingerprint(const ProvingKey& k) {
  Fnv1a f;
  const std::uint64_t shape[4] = {k.log_n, k.num_vars, k.num_public,
                                  k.format == KeyFormat::snarkjs ? 0u : 1u};
  f.add(shape, sizeof shape);
  f.add(&k.vk.alpha_1, sizeof k.vk.alpha_1);
  f.add(&k.vk.beta_2, sizeof k.vk.beta_2);
  f.add(&k.vk.gamma_2, sizeof k.vk.gamma_2);
  f.add(&k.vk.delta_2, sizeof k.vk.delta_2);
  f.add(&k.beta_1, sizeof k.beta_1);
  f.add(&k.delta_1, sizeof k.delta_1);
  f.add_vector(k.vk.ic);
  f.add_vector(k.a);
  f.add_vector(k.b_g1);
  f.add_vector(k.l);
  f.add_vector(k.h);
  f.add_vector(k.b_g2);
  for (const auto& c : k.coefficients) {
    f.add(&c.matrix, sizeof c.matrix);
    f.add(&c.row, sizeof c.row);
    f.add(&c.signal, sizeof c.signal);
    f.add(&c.value, sizeof c.value);
  }
  return f.value();
}

// "" when the keys are equal byte for byte, else where they first differ.
template <typename T, typename A>
std::string first_difference(const char* name, const std::vector<T, A>& x,
                             const std::vector<T, A>& y) {
  if (x.size() != y.size())
    return std::string(name) + ": " + std::to_string(x.size()) + " against " +
           std::to_string(y.size()) + " points";
  for (std::size_t i = 0; i < x.size(); ++i)
    if (std::memcmp(&x[i], &y[i], sizeof(T)) != 0)
      return std::string(name) + "[" + std::to_string(i) + "]";
  return "";
}

inline std::string first_difference(const ProvingKey& x, const ProvingKey& y) {
  const auto one = [](const auto& p, const auto& q) { return std::memcmp(&p, &q, sizeof p) == 0; };
  if (x.format != y.format || x.log_n != y.log_n || x.num_vars != y.num_vars ||
      x.num_public != y.num_public)
    return "the key's shape";
  if (!one(x.vk.alpha_1, y.vk.alpha_1) || !one(x.vk.beta_2, y.vk.beta_2) ||
      !one(x.vk.gamma_2, y.vk.gamma_2) || !one(x.vk.delta_2, y.vk.delta_2) ||
      !one(x.beta_1, y.beta_1) || !one(x.delta_1, y.delta_1))
    return "the verifying key's points";
  for (const std::string& d :
       {first_difference("ic", x.vk.ic, y.vk.ic), first_difference("a", x.a, y.a),
        first_difference("b_g1", x.b_g1, y.b_g1), first_difference("l", x.l, y.l),
        first_difference("h", x.h, y.h), first_difference("b_g2", x.b_g2, y.b_g2)})
    if (!d.empty()) return d;
  if (x.coefficients.size() != y.coefficients.size()) return "coefficients";
  for (std::size_t i = 0; i < x.coefficients.size(); ++i) {
    const auto &c = x.coefficients[i], &d = y.coefficients[i];
    if (c.matrix != d.matrix || c.row != d.row || c.signal != d.signal || !one(c.value, d.value))
      return "coefficients[" + std::to_string(i) + "]";
  }
  return "";
}

}  // namespace stoker::engine::groth16::test
