// bellman / bellperson .params files; see params_file.hpp.
#include "engine/groth16/params_file.hpp"

#include <algorithm>
#include <bit>
#include <exception>
#include <new>
#include <span>
#include <vector>

#include "common/host_memory_limit.hpp"
#include "engine/groth16/detail/file_io.hpp"
#include "engine/groth16/detail/read_in_pieces.hpp"
#include "kernels/g1_encoding.hpp"
#include "kernels/g2_encoding.hpp"

namespace stoker::engine::groth16 {
namespace {

using detail::InputFile;
using detail::OutputFile;
using kernels::G1Affine;
using kernels::G2Affine;
using kernels::kG1EncodedBytes;
using kernels::kG2EncodedBytes;

// Points a thread reads and decodes at once: 16384 G2 points are 3 MiB.
constexpr std::size_t kPiece = 16384;

std::string byte_at(std::uint64_t offset) {
  return "byte " + std::to_string(offset);
}

std::uint32_t load_u32_be(const unsigned char* p) {
  return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 |
         std::uint32_t{p[3]};
}

Error invalid(const InputFile& f, const std::string& what) {
  return Error{Errc::invalid_argument, f.path() + ": " + what};
}

// Decoding of one point, the same call for G1 and G2. G2 decoding checks
// the curve equation too; subgroups are checked in bulk afterwards.
std::error_code decode(const unsigned char* b, G1Affine& p) {
  return kernels::decode_g1(b, p);
}
std::error_code decode(const unsigned char* b, G2Affine& p) {
  return kernels::decode_g2(b, p, kernels::SubgroupCheck::skip);
}
// How a point is decoded: as above; or for a load onto devices, whose bulk
// checks take the curve with the subgroup (or which trusts the key), with
// the coordinates in Montgomery form or left canonical for the devices to
// convert (kernels/fq_montgomery.hpp).
enum class Decode { checked_curve, montgomery, canonical };
std::error_code decode(const unsigned char* b, G1Affine& p, Decode how) {
  return how == Decode::canonical ? kernels::decode_g1_canonical(b, p) : decode(b, p);
}
std::error_code decode(const unsigned char* b, G2Affine& p, Decode how) {
  return how == Decode::canonical    ? kernels::decode_g2_canonical(b, p)
         : how == Decode::montgomery ? kernels::decode_g2_coordinates(b, p)
                                     : decode(b, p);
}
template <typename Point>
constexpr std::size_t encoded_bytes() {
  return std::is_same_v<Point, G1Affine> ? kG1EncodedBytes : kG2EncodedBytes;
}

// Reads a file front to back, remembering where each vector starts so
// that the bulk checks can name a point's byte.
class Cursor {
 public:
  explicit Cursor(const InputFile& f) : f_(f) {}
  std::uint64_t pos() const { return pos_; }

  template <typename Point>
  Error point(const char* name, Point& out, PointCheck check) {
    constexpr std::size_t kBytes = encoded_bytes<Point>();
    if (f_.size() - pos_ < kBytes)
      return invalid(f_, "truncated: " + std::string(name) + " at " + byte_at(pos_) + " needs " +
                             std::to_string(kBytes) + " bytes, the file ends at " +
                             byte_at(f_.size()));
    unsigned char b[kBytes];
    if (Error e = f_.read(pos_, b, kBytes, name)) return e;
    if (auto ec = decode(b, out))
      return invalid(f_, std::string(name) + " (" + byte_at(pos_) + "): " + ec.message());
    if (auto bad = find_bad_point(std::span<const Point>(&out, 1), check, 1))
      return invalid(f_, std::string(name) + " (" + byte_at(pos_) + "): " + bad->reason);
    pos_ += kBytes;
    return {};
  }

  Error count(const char* name, std::uint32_t& out) {
    if (f_.size() - pos_ < 4)
      return invalid(f_, "truncated: the " + std::string(name) + " count at " + byte_at(pos_) +
                             " needs 4 bytes, the file ends at " + byte_at(f_.size()));
    unsigned char b[4];
    if (Error e = f_.read(pos_, b, 4, name)) return e;
    out = load_u32_be(b);
    pos_ += 4;
    return {};
  }

  // Steps over `count` points, checking that the file holds them; where
  // they start goes to `first_byte`.
  template <typename Point>
  Error skip(const char* name, std::uint32_t count, std::uint64_t& first_byte) {
    constexpr std::size_t kBytes = encoded_bytes<Point>();
    const std::uint64_t total = std::uint64_t{kBytes} * count;
    if (f_.size() - pos_ < total)
      return invalid(f_, std::string(name) + ": truncated: " + std::to_string(count) +
                             " points from " + byte_at(pos_) + " need " + std::to_string(total) +
                             " bytes, the file ends at " + byte_at(f_.size()) + " (" +
                             std::to_string(total - (f_.size() - pos_)) + " bytes missing)");
    first_byte = pos_;
    pos_ += total;
    return {};
  }

 private:
  const InputFile& f_;
  std::uint64_t pos_ = 0;
};

// Points [first, first + out.size()) of a vector whose points start at
// byte `at`, read in pieces on every thread (detail/read_in_pieces.hpp) and
// decoded into `out`, which no one writes before: one thread's reads, a
// start of the threads for every 4096 points and a zero-filled `out` held a
// 2^18 key's read to 0.25 GB/s on this project's 2-core VM.
template <typename Point>
Error read_encoded(const InputFile& f, const char* name, std::uint64_t at, std::size_t first,
                   std::span<Point> out, unsigned threads, Decode how = Decode::checked_curve) {
  constexpr std::size_t kBytes = encoded_bytes<Point>();
  const std::uint64_t from = at + std::uint64_t{kBytes} * first;
  detail::PiecesStop stop;
  try {
    stop = detail::read_in_pieces(
        out.size(), kBytes, kPiece, threads,
        [&](std::size_t i, std::span<unsigned char> bytes) {
          return f.read(from + i * kBytes, bytes.data(), bytes.size(), name);
        },
        [&](std::size_t i, const unsigned char* b) { return !decode(b, out[i], how); });
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused(f.path() + ": " + name + ": read buffers",
                                       std::min<std::size_t>(out.size(), kPiece) * kBytes);
  }
  if (stop.error) return stop.error;
  if (stop.bad < out.size()) {
    Point p;
    return invalid(f, std::string(name) + ": point " + std::to_string(first + stop.bad) + " (" +
                          byte_at(from + stop.bad * kBytes) +
                          "): " + decode(stop.record.data(), p, how).message());
  }
  return {};
}

// A whole vector of `count` points at byte `at` into `out`.
template <typename Point>
Error read_vector(const InputFile& f, const char* name, std::uint64_t at, std::uint32_t count,
                  PointVector<Point>& out, unsigned threads) {
  try {
    out.resize(count);
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused(
        f.path() + ": " + name + ": " + std::to_string(count) + " points",
        std::size_t{count} * sizeof(Point));
  }
  return read_encoded(f, name, at, 0, std::span<Point>(out), threads);
}

template <typename Point>
Error check_points(const InputFile& f, const char* name, const PointVector<Point>& points,
                   std::uint64_t first_byte, PointCheck check, unsigned threads) {
  if (auto bad = find_bad_point(std::span<const Point>(points), check, threads))
    return invalid(f, std::string(name) + ": point " + std::to_string(bad->index) + " (" +
                          byte_at(first_byte + bad->index * encoded_bytes<Point>()) +
                          "): " + bad->reason);
  return {};
}

// The six points of the header and IC, which are all a verifier needs.
Error read_head(const InputFile& f, Cursor& c, ProvingKey& k, std::uint64_t& at_ic,
                PointCheck check, unsigned threads) {
  if (Error e = c.point("alpha_g1", k.vk.alpha_1, check)) return e;
  if (Error e = c.point("beta_g1", k.beta_1, check)) return e;
  if (Error e = c.point("beta_g2", k.vk.beta_2, check)) return e;
  if (Error e = c.point("gamma_g2", k.vk.gamma_2, check)) return e;
  if (Error e = c.point("delta_g1", k.delta_1, check)) return e;
  if (Error e = c.point("delta_g2", k.vk.delta_2, check)) return e;
  std::uint32_t n_ic = 0;
  const std::uint64_t count_at = c.pos();
  if (Error e = c.count("IC", n_ic)) return e;
  if (n_ic == 0)
    return invalid(f, "the IC count at " + byte_at(count_at) +
                          " is 0; IC needs a point for the constant wire 1 at least");
  if (Error e = c.skip<G1Affine>("IC", n_ic, at_ic)) return e;
  return read_vector(f, "IC", at_ic, n_ic, k.vk.ic, threads);
}

Result<VerifyingKey> read_params_vk_body(const std::string& path, PointCheck check,
                                         unsigned threads) {
  auto opened = InputFile::open(path);
  if (!opened) return std::move(opened).error();
  const InputFile& f = *opened;
  Cursor c(f);
  ProvingKey k;
  std::uint64_t at_ic = 0;
  if (Error e = read_head(f, c, k, at_ic, check, threads)) return e;
  if (Error e = check_points(f, "IC", k.vk.ic, at_ic, check, threads)) return e;
  return std::move(k.vk);
}

// Where the queries lie: the first byte of each one's points, in Query's
// order (H, L, A, B_G1, B_G2).
struct Layout {
  std::uint64_t at_ic = 0;
  std::uint64_t at[5] = {};
};

// The head and IC read, the counts walked and checked against each other
// and the file's size (no query's points read); `k` gets the head, the
// shape and `counts` the queries' sizes.
Error read_layout(const InputFile& f, PointCheck check, unsigned threads, ProvingKey& k,
                  QueryCounts& counts, Layout& at) {
  Cursor c(f);
  k.format = KeyFormat::bellman;
  if (Error e = read_head(f, c, k, at.at_ic, check, threads)) return e;
  const auto n_ic = static_cast<std::uint32_t>(k.vk.ic.size());
  std::uint32_t n_h = 0, n_l = 0, n_a = 0, n_b1 = 0, n_b2 = 0;
  auto& at_q = at.at;

  std::uint64_t count_at = c.pos();
  if (Error e = c.count("H", n_h)) return e;
  if (!std::has_single_bit(std::uint64_t{n_h} + 1))
    return invalid(f, "the H count " + std::to_string(n_h) + " at " + byte_at(count_at) +
                          " is not n - 1 for a power of two n");
  if (Error e = c.skip<G1Affine>("H", n_h, at_q[0])) return e;

  if (Error e = c.count("L", n_l)) return e;
  if (Error e = c.skip<G1Affine>("L", n_l, at_q[1])) return e;
  const std::uint64_t n_vars = std::uint64_t{n_ic} + n_l;

  count_at = c.pos();
  if (Error e = c.count("A", n_a)) return e;
  if (n_a > n_vars)
    return invalid(f, "the A count " + std::to_string(n_a) + " at " + byte_at(count_at) +
                          " exceeds the IC + L = " + std::to_string(n_vars) + " wires");
  if (Error e = c.skip<G1Affine>("A", n_a, at_q[2])) return e;

  count_at = c.pos();
  if (Error e = c.count("B_G1", n_b1)) return e;
  if (n_b1 > n_vars)
    return invalid(f, "the B_G1 count " + std::to_string(n_b1) + " at " + byte_at(count_at) +
                          " exceeds the IC + L = " + std::to_string(n_vars) + " wires");
  if (Error e = c.skip<G1Affine>("B_G1", n_b1, at_q[3])) return e;

  count_at = c.pos();
  if (Error e = c.count("B_G2", n_b2)) return e;
  if (n_b2 != n_b1)
    return invalid(f, "the B_G2 count " + std::to_string(n_b2) + " at " + byte_at(count_at) +
                          " differs from the B_G1 count " + std::to_string(n_b1) +
                          " (both hold the wires of the B density)");
  if (Error e = c.skip<G2Affine>("B_G2", n_b2, at_q[4])) return e;
  if (c.pos() != f.size())
    return invalid(
        f, std::to_string(f.size() - c.pos()) + " bytes after B_G2, from " + byte_at(c.pos()));

  k.log_n = static_cast<unsigned>(std::countr_zero(std::uint64_t{n_h} + 1));
  k.num_public = n_ic - 1;
  k.num_vars = static_cast<std::size_t>(n_vars);
  counts = QueryCounts{n_h, n_l, n_a, n_b1, n_b2};
  return {};
}

Result<ProvingKey> read_params_body(const std::string& path, PointCheck check, unsigned threads) {
  auto opened = InputFile::open(path);
  if (!opened) return std::move(opened).error();
  const InputFile& f = *opened;
  ProvingKey k;
  QueryCounts n;
  Layout at;
  if (Error e = read_layout(f, check, threads, k, n, at)) return e;
  const auto u32 = [](std::size_t v) { return static_cast<std::uint32_t>(v); };
  if (Error e = read_vector(f, "H", at.at[0], u32(n.h), k.h, threads)) return e;
  if (Error e = read_vector(f, "L", at.at[1], u32(n.l), k.l, threads)) return e;
  if (Error e = read_vector(f, "A", at.at[2], u32(n.a), k.a, threads)) return e;
  if (Error e = read_vector(f, "B_G1", at.at[3], u32(n.b_g1), k.b_g1, threads)) return e;
  if (Error e = read_vector(f, "B_G2", at.at[4], u32(n.b_g2), k.b_g2, threads)) return e;

  if (Error e = check_points(f, "IC", k.vk.ic, at.at_ic, check, threads)) return e;
  if (Error e = check_points(f, "H", k.h, at.at[0], check, threads)) return e;
  if (Error e = check_points(f, "L", k.l, at.at[1], check, threads)) return e;
  if (Error e = check_points(f, "A", k.a, at.at[2], check, threads)) return e;
  if (Error e = check_points(f, "B_G1", k.b_g1, at.at[3], check, threads)) return e;
  if (Error e = check_points(f, "B_G2", k.b_g2, at.at[4], check, threads)) return e;
  return k;
}

Decode decode_for(PointForm form) {
  return form == PointForm::canonical ? Decode::canonical : Decode::montgomery;
}

// The file form for a load onto devices (key_file.hpp).
class ParamsKeyFile final : public KeyFile {
 public:
  ParamsKeyFile(InputFile f, ProvingKey head, QueryCounts counts, Layout at)
      : f_(std::move(f)), at_(at) {
    head_ = std::move(head);
    counts_ = counts;
  }
  const std::string& path() const noexcept override { return f_.path(); }
  int fd() const noexcept override { return f_.fd(); }

  PointForm stored_form() const noexcept override { return PointForm::canonical; }
  Error read(Query q, std::size_t first, std::span<G1Affine> out, unsigned threads,
             PointForm form) const override {
    if (Error e = out_of_query(q, false, first, out.size())) return e;
    if (Error e = read_encoded(f_, query_name(q), at_.at[static_cast<int>(q)], first, out, threads,
                               decode_for(form)))
      return e;
    return unchanged();
  }
  // The load checks a G2 point's curve with its subgroup on the devices, or
  // trusts the key: the curve equation here would be a third of a
  // Montgomery-form read's CPU time.
  Error read_b_g2(std::size_t first, std::span<G2Affine> out, unsigned threads,
                  PointForm form) const override {
    if (Error e = out_of_query(Query::b_g2, true, first, out.size())) return e;
    if (Error e = read_encoded(f_, "B_G2", at_.at[4], first, out, threads, decode_for(form)))
      return e;
    return unchanged();
  }

 private:
  InputFile f_;
  Layout at_;
};

Result<std::unique_ptr<KeyFile>> open_params_body(const std::string& path, unsigned threads) {
  auto opened = InputFile::open(path);
  if (!opened) return std::move(opened).error();
  ProvingKey k;
  QueryCounts n;
  Layout at;
  if (Error e = read_layout(*opened, PointCheck::trusted, threads, k, n, at)) return e;
  return std::unique_ptr<KeyFile>(
      std::make_unique<ParamsKeyFile>(std::move(*opened), std::move(k), n, at));
}

std::string key_problem(const ProvingKey& k) {
  if (k.format != KeyFormat::bellman)
    return "the key is in snarkjs form (H in the Lagrange basis of the odd coset); a .params "
           "file holds bellman's";
  if (k.vk.ic.size() != k.num_public + 1)
    return "IC has " + std::to_string(k.vk.ic.size()) +
           " points where num_public + 1 = " + std::to_string(k.num_public + 1);
  if (k.num_vars < k.vk.ic.size() || k.l.size() != k.num_vars - k.vk.ic.size())
    return "L has " + std::to_string(k.l.size()) +
           " points where num_vars - num_public - 1 = " + std::to_string(k.num_vars) + " - " +
           std::to_string(k.vk.ic.size());
  if (k.log_n > 32 || k.h.size() != k.domain_size() - 1)
    return "H has " + std::to_string(k.h.size()) + " points where n - 1 for log_n " +
           std::to_string(k.log_n) + " is needed";
  if (k.a.size() > k.num_vars)
    return "A has " + std::to_string(k.a.size()) + " points, more than the " +
           std::to_string(k.num_vars) + " wires";
  if (k.b_g1.size() > k.num_vars || k.b_g2.size() != k.b_g1.size())
    return "B_G1 and B_G2 have " + std::to_string(k.b_g1.size()) + " and " +
           std::to_string(k.b_g2.size()) + " points: the same number, at most num_vars " +
           std::to_string(k.num_vars) + ", is needed";
  for (std::size_t n : {k.vk.ic.size(), k.h.size(), k.l.size(), k.a.size(), k.b_g1.size()})
    if (n > UINT32_MAX) return std::to_string(n) + " points in one vector, more than a u32 counts";
  return {};
}

void encode(const G1Affine& p, unsigned char* b) {
  kernels::encode_g1(p, b);
}
void encode(const G2Affine& p, unsigned char* b) {
  kernels::encode_g2(p, b);
}

template <typename Point>
Error write_point(OutputFile& f, const Point& p) {
  unsigned char b[encoded_bytes<Point>()];
  encode(p, b);
  return f.write(b, sizeof b);
}

template <typename Point>
Error write_vector(OutputFile& f, const PointVector<Point>& points) {
  constexpr std::size_t kBytes = encoded_bytes<Point>();
  const auto n = static_cast<std::uint32_t>(points.size());
  const unsigned char count[4] = {
      static_cast<unsigned char>(n >> 24), static_cast<unsigned char>(n >> 16),
      static_cast<unsigned char>(n >> 8), static_cast<unsigned char>(n)};
  if (Error e = f.write(count, 4)) return e;
  std::vector<unsigned char> buf(kBytes * std::min(points.size(), kPiece));
  for (std::size_t first = 0; first < points.size(); first += kPiece) {
    const std::size_t m = std::min(kPiece, points.size() - first);
    for (std::size_t i = 0; i < m; ++i) encode(points[first + i], buf.data() + i * kBytes);
    if (Error e = f.write(buf.data(), m * kBytes)) return e;
  }
  return {};
}

Error write_params_body(const std::string& path, const ProvingKey& k) {
  if (std::string p = key_problem(k); !p.empty())
    return Error{Errc::invalid_argument, "write_params: " + path + ": " + p};
  auto created = OutputFile::create(path);
  if (!created) return std::move(created).error();
  OutputFile& f = *created;
  if (Error e = write_point(f, k.vk.alpha_1)) return e;
  if (Error e = write_point(f, k.beta_1)) return e;
  if (Error e = write_point(f, k.vk.beta_2)) return e;
  if (Error e = write_point(f, k.vk.gamma_2)) return e;
  if (Error e = write_point(f, k.delta_1)) return e;
  if (Error e = write_point(f, k.vk.delta_2)) return e;
  if (Error e = write_vector(f, k.vk.ic)) return e;
  if (Error e = write_vector(f, k.h)) return e;
  if (Error e = write_vector(f, k.l)) return e;
  if (Error e = write_vector(f, k.a)) return e;
  if (Error e = write_vector(f, k.b_g1)) return e;
  if (Error e = write_vector(f, k.b_g2)) return e;
  return f.close();
}

}  // namespace

Result<ProvingKey> read_params(const std::string& path, PointCheck check, unsigned threads) {
  try {
    return read_params_body(path, check, threads);
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused(path + ": reading the key");
  } catch (const std::exception& e) {
    return Error{Errc::io_error, path + ": " + e.what()};
  }
}

Result<std::unique_ptr<KeyFile>> open_params(const std::string& path, unsigned threads) {
  try {
    return open_params_body(path, threads);
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused(path + ": opening the key");
  } catch (const std::exception& e) {
    return Error{Errc::io_error, path + ": " + e.what()};
  }
}

Result<VerifyingKey> read_params_verifying_key(const std::string& path, PointCheck check,
                                               unsigned threads) {
  try {
    return read_params_vk_body(path, check, threads);
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused(path + ": reading the key");
  } catch (const std::exception& e) {
    return Error{Errc::io_error, path + ": " + e.what()};
  }
}

Error write_params(const std::string& path, const ProvingKey& key) {
  try {
    return write_params_body(path, key);
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused(path + ": writing the key");
  } catch (const std::exception& e) {
    return Error{Errc::io_error, path + ": " + e.what()};
  }
}

}  // namespace stoker::engine::groth16
