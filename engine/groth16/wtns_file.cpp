// Witness files; see wtns_file.hpp.
#include "engine/groth16/wtns_file.hpp"

#include <bit>
#include <cstring>
#include <exception>
#include <new>
#include <string_view>

#include "common/host_memory_limit.hpp"
#include "engine/groth16/detail/bin_file.hpp"
#include "engine/groth16/detail/decimal.hpp"
#include "engine/groth16/detail/fr_section.hpp"

namespace stoker::engine::groth16 {
namespace {

using detail::BinFileReader;
using detail::load_u32_le;
using detail::Section;
using kernels::Fr;

// The values are read into the vector as they lie in the file and
// converted in place: 32 little-endian bytes are an Fr's four words.
static_assert(std::endian::native == std::endian::little && sizeof(Fr) == 32,
              "a witness value is read as the words of an Fr");

constexpr std::uint32_t kVersion = 2;
constexpr std::uint32_t kN8 = 32;
enum Sec : std::uint32_t { kHeader = 1, kValues = 2 };
constexpr std::size_t kHeaderBytes = 4 + kN8 + 4;

std::string_view section_name(std::uint32_t id) {
  switch (id) {
    case kHeader:
      return "header";
    case kValues:
      return "witness values";
    default:
      return {};
  }
}

Result<WitnessValues> read_wtns_body(detail::InputFile file, unsigned threads) {
  const std::string path = file.path();
  auto opened = BinFileReader::open(std::move(file), "wtns", section_name);
  if (!opened) return std::move(opened).error();
  const BinFileReader& f = *opened;
  if (f.version() != kVersion)
    return Error{Errc::invalid_argument, path + ": wtns version " + std::to_string(f.version()) +
                                             "; stoker reads version 2 (circom 2, snarkjs 0.7)"};
  auto hs = f.require(kHeader);
  if (!hs) return std::move(hs).error();
  const Section& h = **hs;
  // Room for n8 and the modulus of any field circom compiles to, not more.
  unsigned char b[4 + 64 + 4];
  const std::size_t got = static_cast<std::size_t>(std::min<std::uint64_t>(h.size, sizeof b));
  if (Error e = f.read(h, 0, b, got)) return e;
  if (got < 4) return f.error(kHeader, std::to_string(h.size) + " bytes, shorter than n8");
  const std::uint32_t n8 = load_u32_le(b);
  if (n8 != kN8) {
    std::string what = "n8 = " + std::to_string(n8) + " (byte " + std::to_string(h.offset) + ")";
    if (4 + std::size_t{n8} <= got) what += ", r = " + detail::describe_modulus({b + 4, n8});
    return f.error(kHeader, what + ": not BLS12-381's scalar field (n8 = 32)");
  }
  if (h.size != kHeaderBytes)
    return f.error(kHeader, std::to_string(h.size) + " bytes where n8 = 32 makes 4 + 32 + 4 = 40");
  unsigned char want_r[kN8];
  detail::write_r_le(want_r);
  if (std::memcmp(b + 4, want_r, kN8) != 0)
    return f.error(kHeader,
                   "r = " + detail::describe_modulus({b + 4, kN8}) + " (byte " +
                       std::to_string(h.offset + 4) +
                       "): not BLS12-381's scalar field; stoker proves over BLS12-381 only");
  const std::uint32_t n = load_u32_le(b + 4 + kN8);

  WitnessValues w;
  if (Error e = detail::read_fr_section(f, kValues, n, "nWitness = " + std::to_string(n) + " makes",
                                        w, threads))
    return e;
  return w;
}

Error write_wtns_body(const std::string& path, std::span<const Fr> witness) {
  if (witness.size() > UINT32_MAX)
    return Error{Errc::invalid_argument, "write_wtns: " + path + ": " +
                                             std::to_string(witness.size()) +
                                             " values, more than a wtns file counts"};
  auto created = detail::BinFileWriter::create(path, "wtns", kVersion, 2);
  if (!created) return std::move(created).error();
  detail::BinFileWriter& out = *created;
  unsigned char h[kHeaderBytes];
  detail::store_u32_le(kN8, h);
  detail::write_r_le(h + 4);
  detail::store_u32_le(static_cast<std::uint32_t>(witness.size()), h + 4 + kN8);
  if (Error e = out.begin_section(kHeader, sizeof h)) return e;
  if (Error e = out.write(h, sizeof h)) return e;
  if (Error e = out.begin_section(kValues, std::uint64_t{kN8} * witness.size())) return e;
  if (Error e = detail::write_fr_values(out, witness)) return e;
  return out.finish();
}

template <typename Open>
Result<WitnessValues> read_wtns_from(const std::string& path, Open open, unsigned threads) {
  try {
    auto file = open();
    if (!file) return std::move(file).error();
    return read_wtns_body(std::move(*file), threads);
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused(path + ": reading the witness");
  } catch (const std::exception& e) {
    return Error{Errc::io_error, path + ": " + e.what()};
  }
}

}  // namespace

Result<WitnessValues> read_wtns(const std::string& path, unsigned threads) {
  return read_wtns_from(path, [&] { return detail::InputFile::open(path); }, threads);
}

Result<WitnessValues> read_wtns(const FileWindow& w, unsigned threads) {
  return read_wtns_from(
      w.label, [&] { return detail::InputFile::open_window(w.fd, w.label, w.offset, w.bytes); },
      threads);
}

Error write_wtns(const std::string& path, std::span<const Fr> witness) {
  try {
    return write_wtns_body(path, witness);
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused(path + ": writing the witness");
  } catch (const std::exception& e) {
    return Error{Errc::io_error, path + ": " + e.what()};
  }
}

}  // namespace stoker::engine::groth16
