// Bellman witness files; see bellman_witness_file.hpp.
#include "engine/groth16/bellman_witness_file.hpp"

#include <bit>
#include <cstring>
#include <exception>
#include <new>
#include <string_view>

#include "common/host_memory_limit.hpp"
#include "engine/groth16/detail/bin_file.hpp"
#include "engine/groth16/detail/fr_section.hpp"

namespace stoker::engine::groth16 {
namespace {

using detail::BinFileReader;
using detail::load_u32_le;
using detail::Section;
using kernels::Fr;

constexpr std::uint32_t kVersion = 1;
constexpr std::uint32_t kN8 = 32;
constexpr std::size_t kHeaderBytes = 4 + kN8 + 12;
enum Sec : std::uint32_t { kHeader = 1, kA, kB, kC, kInputs, kAux, kDensity, kSections = kDensity };

std::string_view section_name(std::uint32_t id) {
  switch (id) {
    case kHeader:
      return "header";
    case kA:
      return "a";
    case kB:
      return "b";
    case kC:
      return "c";
    case kInputs:
      return "inputs";
    case kAux:
      return "aux";
    case kDensity:
      return "density bits";
    default:
      return {};
  }
}

std::size_t bytes_of_bits(std::size_t bits) {
  return (bits + 7) / 8;
}

std::vector<bool> unpack(const unsigned char* bytes, std::size_t bits) {
  std::vector<bool> out(bits);
  for (std::size_t i = 0; i < bits; ++i) out[i] = (bytes[i / 8] >> (i % 8)) & 1;
  return out;
}

void pack(const std::vector<bool>& bits, std::vector<unsigned char>& out) {
  const std::size_t at = out.size();
  out.resize(at + bytes_of_bits(bits.size()), 0);
  for (std::size_t i = 0; i < bits.size(); ++i)
    if (bits[i]) out[at + i / 8] |= static_cast<unsigned char>(1u << (i % 8));
}

Result<BellmanWitness> read_body(detail::InputFile file, unsigned threads) {
  const std::string path = file.path();
  auto opened = BinFileReader::open(std::move(file), "bwit", section_name);
  if (!opened) return std::move(opened).error();
  const BinFileReader& f = *opened;
  if (f.version() != kVersion)
    return Error{Errc::invalid_argument, path + ": bellman witness version " +
                                             std::to_string(f.version()) + "; stoker reads 1"};
  auto hs = f.require(kHeader);
  if (!hs) return std::move(hs).error();
  const Section& h = **hs;
  if (h.size != kHeaderBytes)
    return f.error(
        kHeader, std::to_string(h.size) + " bytes; the header has " + std::to_string(kHeaderBytes));
  unsigned char b[kHeaderBytes];
  if (Error e = f.read(h, 0, b, sizeof b)) return e;
  unsigned char want_r[kN8];
  detail::write_r_le(want_r);
  if (load_u32_le(b) != kN8 || std::memcmp(b + 4, want_r, kN8) != 0)
    return f.error(kHeader, "n8 and r are not BLS12-381's scalar field");
  const std::uint32_t log_n = load_u32_le(b + 4 + kN8);
  const std::uint32_t num_inputs = load_u32_le(b + 8 + kN8);
  const std::uint32_t num_aux = load_u32_le(b + 12 + kN8);
  if (log_n > 31) return f.error(kHeader, "log_n = " + std::to_string(log_n) + " is above 31");
  if (num_inputs == 0) return f.error(kHeader, "no inputs: inputs[0] is the constant 1");

  BellmanWitness w;
  const std::size_t n = std::size_t{1} << log_n;
  const std::pair<std::uint32_t, WitnessValues*> domain[] = {{kA, &w.a}, {kB, &w.b}, {kC, &w.c}};
  constexpr std::string_view kCounts = "the header's counts make";
  for (auto [id, v] : domain)
    if (Error e = detail::read_fr_section(f, id, n, kCounts, *v, threads)) return e;
  if (Error e = detail::read_fr_section(f, kInputs, num_inputs, kCounts, w.inputs, threads))
    return e;
  if (Error e = detail::read_fr_section(f, kAux, num_aux, kCounts, w.aux, threads)) return e;

  auto ds = f.require(kDensity);
  if (!ds) return std::move(ds).error();
  const Section& d = **ds;
  const std::size_t aux_bytes = bytes_of_bits(num_aux), in_bytes = bytes_of_bits(num_inputs);
  if (d.size != 2 * aux_bytes + in_bytes)
    return f.error(kDensity, std::to_string(d.size) + " bytes where the header's counts make " +
                                 std::to_string(2 * aux_bytes + in_bytes));
  std::vector<unsigned char> bits(d.size);
  if (Error e = f.read(d, 0, bits.data(), bits.size())) return e;
  w.a_aux_density = unpack(bits.data(), num_aux);
  w.b_input_density = unpack(bits.data() + aux_bytes, num_inputs);
  w.b_aux_density = unpack(bits.data() + aux_bytes + in_bytes, num_aux);
  return w;
}

Error write_body(const std::string& path, const BellmanWitness& w) {
  const std::size_t n = w.a.size();
  if (n == 0 || !std::has_single_bit(n) || w.b.size() != n || w.c.size() != n)
    return Error{Errc::invalid_argument, path + ": a, b and c must have one power-of-two length"};
  if (w.inputs.empty() || w.inputs.size() > UINT32_MAX || w.aux.size() > UINT32_MAX)
    return Error{Errc::invalid_argument, path + ": inputs (at least the constant) or aux count"};
  if (w.a_aux_density.size() != w.aux.size() || w.b_aux_density.size() != w.aux.size() ||
      w.b_input_density.size() != w.inputs.size())
    return Error{Errc::invalid_argument,
                 path + ": the density bits must have one bit per input or aux wire"};
  auto created = detail::BinFileWriter::create(path, "bwit", kVersion, kSections);
  if (!created) return std::move(created).error();
  detail::BinFileWriter& out = *created;
  unsigned char h[kHeaderBytes];
  detail::store_u32_le(kN8, h);
  detail::write_r_le(h + 4);
  detail::store_u32_le(static_cast<std::uint32_t>(std::countr_zero(n)), h + 4 + kN8);
  detail::store_u32_le(static_cast<std::uint32_t>(w.inputs.size()), h + 8 + kN8);
  detail::store_u32_le(static_cast<std::uint32_t>(w.aux.size()), h + 12 + kN8);
  if (Error e = out.begin_section(kHeader, sizeof h)) return e;
  if (Error e = out.write(h, sizeof h)) return e;
  const std::pair<std::uint32_t, const WitnessValues*> values[] = {
      {kA, &w.a}, {kB, &w.b}, {kC, &w.c}, {kInputs, &w.inputs}, {kAux, &w.aux}};
  for (auto [id, v] : values) {
    if (Error e = out.begin_section(id, std::uint64_t{kN8} * v->size())) return e;
    if (Error e = detail::write_fr_values(out, *v)) return e;
  }
  std::vector<unsigned char> bits;
  pack(w.a_aux_density, bits);
  pack(w.b_input_density, bits);
  pack(w.b_aux_density, bits);
  if (Error e = out.begin_section(kDensity, bits.size())) return e;
  if (Error e = out.write(bits.data(), bits.size())) return e;
  return out.finish();
}

template <typename Open>
Result<BellmanWitness> read_from(const std::string& path, Open open, unsigned threads) {
  try {
    auto file = open();
    if (!file) return std::move(file).error();
    return read_body(std::move(*file), threads);
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused(path + ": reading the witness");
  } catch (const std::exception& e) {
    return Error{Errc::io_error, path + ": " + e.what()};
  }
}

}  // namespace

Result<BellmanWitness> read_bellman_witness(const std::string& path, unsigned threads) {
  return read_from(path, [&] { return detail::InputFile::open(path); }, threads);
}

Result<BellmanWitness> read_bellman_witness(const FileWindow& w, unsigned threads) {
  return read_from(
      w.label, [&] { return detail::InputFile::open_window(w.fd, w.label, w.offset, w.bytes); },
      threads);
}

Error write_bellman_witness(const std::string& path, const BellmanWitness& witness) {
  try {
    return write_body(path, witness);
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused(path + ": writing the witness");
  } catch (const std::exception& e) {
    return Error{Errc::io_error, path + ": " + e.what()};
  }
}

}  // namespace stoker::engine::groth16
