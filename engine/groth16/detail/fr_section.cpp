#include "engine/groth16/detail/fr_section.hpp"

#include <algorithm>
#include <bit>
#include <new>
#include <string>
#include <vector>

#include "common/host_memory_limit.hpp"
#include "engine/groth16/detail/read_in_pieces.hpp"
#include "kernels/detail/fr_mul_adx.hpp"

namespace stoker::engine::groth16::detail {

using kernels::Fr;

// The values are read into the vector as they lie in the file and
// converted in place: 32 little-endian bytes are an Fr's four words.
static_assert(std::endian::native == std::endian::little && sizeof(Fr) == kFrBytes,
              "a value is read as the words of an Fr");

namespace {

// v[i] = v[i] R mod r (Montgomery form) for i in [first, first + n) while
// v[i] < r; returns the first index that is not, or first + n. The product
// by R^2 through the ADX product where this build and CPU have it (the
// same words, kernels/detail/fr_mul_adx.hpp): the conversion was 39 % of
// reading a 2^20 .wtns on the development VM through Fr's portable product.
template <bool kAdx>
std::size_t to_montgomery(Fr* v, std::size_t first, std::size_t n) {
  const Fr r2{{kernels::fr_detail::kR20, kernels::fr_detail::kR21, kernels::fr_detail::kR22,
               kernels::fr_detail::kR23}};
  for (std::size_t i = first; i < first + n; ++i) {
    if (!Fr::is_canonical(v[i].l)) return i;
#if defined(STOKER_FR_MUL_ADX)
    if constexpr (kAdx) {
      v[i] = kernels::detail::fr_mul_adx(v[i], r2);
      continue;
    }
#endif
    v[i] = v[i] * r2;
  }
  return first + n;
}

#if defined(STOKER_FR_MUL_ADX)
__attribute__((target("bmi2,adx"))) std::size_t to_montgomery_adx(Fr* v, std::size_t first,
                                                                  std::size_t n) {
  return to_montgomery<true>(v, first, n);
}
#endif

std::size_t to_montgomery_here(Fr* v, std::size_t first, std::size_t n) {
#if defined(STOKER_FR_MUL_ADX)
  static const bool adx = kernels::detail::cpu_has_adx();
  if (adx) return to_montgomery_adx(v, first, n);
#endif
  return to_montgomery<false>(v, first, n);
}

}  // namespace

void write_r_le(unsigned char out[kFrBytes]) {
  using namespace kernels::fr_detail;
  const std::uint64_t r[4] = {kP0, kP1, kP2, kP3};
  for (std::size_t i = 0; i < kFrBytes; ++i)
    out[i] = static_cast<unsigned char>(r[i / 8] >> (8 * (i % 8)));
}

Error read_fr_section(const BinFileReader& f, std::uint32_t id, std::size_t count,
                      std::string_view count_words, WitnessValues& out, unsigned threads) {
  auto found = f.require(id);
  if (!found) return std::move(found).error();
  const Section& s = **found;
  const std::uint64_t want = std::uint64_t{kFrBytes} * count;
  if (s.size != want)
    return f.error(id, std::to_string(s.size) + " bytes where " + std::string(count_words) +
                           " 32 * " + std::to_string(count) + " = " + std::to_string(want));
  try {
    out.resize(count);
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused(f.where(id) + ": " + std::to_string(count) + " values",
                                       count * sizeof(Fr));
  }
  // Pieces of 2 MiB read and converted on every thread, each straight into
  // its place: one thread reads from the page cache at one stream's rate
  // (a key's sections so: 1.2 GB/s on the GPU machine), and a 2^26
  // bellman witness is about 9 GB.
  const auto stop = read_in_place(
      count, std::size_t{1} << 16, threads,
      [&](std::size_t first, std::size_t n) {
        return f.read(s, kFrBytes * first, out.data() + first, kFrBytes * n);
      },
      [&](std::size_t first, std::size_t n) { return to_montgomery_here(out.data(), first, n); });
  if (stop.error) return stop.error;
  const std::size_t bad = stop.bad;
  if (bad < count)
    return f.error(id, "value " + std::to_string(bad) + " (byte " +
                           std::to_string(s.offset + kFrBytes * bad) + ") is not below r");
  return {};
}

Error write_fr_values(BinFileWriter& out, std::span<const Fr> values) {
  constexpr std::size_t kChunk = 4096;
  std::vector<unsigned char> buf(kFrBytes * std::min(kChunk, values.size()));
  for (std::size_t first = 0; first < values.size(); first += kChunk) {
    const std::size_t count = std::min(kChunk, values.size() - first);
    for (std::size_t i = 0; i < count; ++i) values[first + i].to_bytes(buf.data() + kFrBytes * i);
    if (Error e = out.write(buf.data(), kFrBytes * count)) return e;
  }
  return {};
}

}  // namespace stoker::engine::groth16::detail
