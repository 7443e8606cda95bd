// Decimal strings of field elements; see decimal.hpp.
#include "engine/groth16/detail/decimal.hpp"

#include <algorithm>
#include <vector>

namespace stoker::engine::groth16::detail {
namespace {

using u128 = unsigned __int128;
constexpr std::uint64_t kTen19 = 10000000000000000000ull;  // the largest power of 10 in a u64

// A long value shown whole would drown the message; its start and length
// say enough.
std::string quoted(std::string_view text) {
  constexpr std::size_t kShown = 120;
  if (text.size() <= kShown) return "'" + std::string(text) + "'";
  return "'" + std::string(text.substr(0, kShown)) + "...' (" + std::to_string(text.size()) +
         " characters)";
}

struct KnownModulus {
  const char* decimal;
  const char* name;
};
constexpr KnownModulus kKnownModuli[] = {
    {"4002409555221667393417789825735904156556882819939007885332058136124031650490837864442687629"
     "129015664037894272559787",
     "BLS12-381's q"},
    {"52435875175126190479447740508185965837690552500527637822603658699938581184513",
     "BLS12-381's r"},
    {"21888242871839275222246405745257275088696311157297823662689037894645226208583", "bn128's q"},
    {"21888242871839275222246405745257275088548364400416034343698204186575808495617", "bn128's r"},
    {"2586644260129690940106527336948935335363935127549146605398842626667204683483408227749688881"
     "39573360124440321458177",
     "BLS12-377's q"},
    {"8444461749428370424248824938781546531375899335154063827935233455917409239041",
     "BLS12-377's r"},
};

}  // namespace

std::string describe_modulus(std::span<const unsigned char> le_bytes) {
  std::vector<std::uint64_t> limbs((le_bytes.size() + 7) / 8, 0);
  for (std::size_t i = 0; i < le_bytes.size(); ++i)
    limbs[i / 8] |= std::uint64_t{le_bytes[i]} << (8 * (i % 8));
  std::string d = to_decimal(limbs);
  for (const auto& k : kKnownModuli)
    if (d == k.decimal) return d + " (" + k.name + ")";
  return d;
}

std::string to_decimal(std::span<const std::uint64_t> limbs) {
  std::vector<std::uint64_t> v(limbs.begin(), limbs.end());
  std::vector<std::uint64_t> chunks;  // base 10^19, least significant first
  auto nonzero = [&v] { return std::any_of(v.begin(), v.end(), [](auto w) { return w != 0; }); };
  while (nonzero()) {
    std::uint64_t rem = 0;
    for (std::size_t i = v.size(); i-- > 0;) {
      const u128 cur = (static_cast<u128>(rem) << 64) | v[i];
      v[i] = static_cast<std::uint64_t>(cur / kTen19);
      rem = static_cast<std::uint64_t>(cur % kTen19);
    }
    chunks.push_back(rem);
  }
  if (chunks.empty()) return "0";
  std::string s = std::to_string(chunks.back());
  for (std::size_t i = chunks.size() - 1; i-- > 0;) {
    const std::string part = std::to_string(chunks[i]);
    s.append(19 - part.size(), '0');
    s += part;
  }
  return s;
}

DecimalProblem parse_decimal(std::string_view text, std::span<std::uint64_t> limbs) {
  if (text.empty()) return DecimalProblem::not_decimal;
  for (char c : text)
    if (c < '0' || c > '9') return DecimalProblem::not_decimal;
  std::fill(limbs.begin(), limbs.end(), 0);
  for (char c : text) {
    std::uint64_t carry = static_cast<std::uint64_t>(c - '0');
    for (auto& w : limbs) {
      const u128 t = static_cast<u128>(w) * 10 + carry;
      w = static_cast<std::uint64_t>(t);
      carry = static_cast<std::uint64_t>(t >> 64);
    }
    if (carry) return DecimalProblem::too_large;
  }
  return DecimalProblem::none;
}

std::string decimal(const kernels::Fq& x) {
  std::uint64_t v[6];
  x.to_canonical(v);
  return to_decimal(v);
}

std::string decimal(const kernels::Fr& x) {
  std::uint64_t v[4];
  x.to_canonical(v);
  return to_decimal(v);
}

ParsedFq parse_fq(std::string_view text) {
  std::uint64_t v[6];
  const DecimalProblem p = parse_decimal(text, v);
  if (p == DecimalProblem::not_decimal) return {{}, quoted(text) + " is not a decimal number"};
  if (p == DecimalProblem::too_large || !kernels::Fq::is_canonical(v))
    return {{}, quoted(text) + " is not below q"};
  return {kernels::Fq::from_canonical(v), {}};
}

ParsedFr parse_fr(std::string_view text) {
  std::uint64_t v[4];
  const DecimalProblem p = parse_decimal(text, v);
  if (p == DecimalProblem::not_decimal) return {{}, quoted(text) + " is not a decimal number"};
  if (p == DecimalProblem::too_large || !kernels::Fr::is_canonical(v))
    return {{}, quoted(text) + " is not below r"};
  return {kernels::Fr::from_canonical(v), {}};
}

}  // namespace stoker::engine::groth16::detail
