// snarkjs Groth16 .zkey files; see zkey_file.hpp.
#include "engine/groth16/zkey_file.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <exception>
#include <new>
#include <span>
#include <string_view>
#include <vector>

#include "common/host_memory_limit.hpp"
#include "engine/groth16/detail/bin_file.hpp"
#include "engine/groth16/detail/decimal.hpp"
#include "engine/groth16/detail/read_in_pieces.hpp"

namespace stoker::engine::groth16 {
namespace {

using detail::BinFileReader;
using detail::BinFileWriter;
using detail::load_u32_le;
using detail::Section;
using kernels::Fq;
using kernels::Fr;
using kernels::G1Affine;
using kernels::G2Affine;

// A zkey's "LEM" points are the kernels' points byte for byte: 48-byte
// little-endian Montgomery coordinates, x before y, c0 before c1, infinity
// all zeros. So sections are read into and written from the vectors
// directly.
static_assert(std::endian::native == std::endian::little,
              "zkey points are copied as the kernels' little-endian words");
static_assert(sizeof(Fq) == 48 && sizeof(G1Affine) == 96 && sizeof(G2Affine) == 192,
              "zkey points are copied as the kernels' G1Affine / G2Affine");

constexpr std::uint32_t kVersion = 1;
constexpr std::uint32_t kGroth16 = 1, kPlonk = 2, kFflonk = 10;

enum Sec : std::uint32_t {
  kProtocol = 1,
  kHeader = 2,
  kIc = 3,
  kCoefs = 4,
  kA = 5,
  kB1 = 6,
  kB2 = 7,
  kC = 8,
  kH = 9,
  kMpc = 10,
};

std::string_view section_name(std::uint32_t id) {
  switch (id) {
    case kProtocol:
      return "protocol";
    case kHeader:
      return "Groth16 header";
    case kIc:
      return "IC points";
    case kCoefs:
      return "A and B coefficients";
    case kA:
      return "A points";
    case kB1:
      return "B1 points";
    case kB2:
      return "B2 points";
    case kC:
      return "C points";
    case kH:
      return "H points";
    case kMpc:
      return "MPC parameters";
    default:
      return {};
  }
}

constexpr std::size_t kG1 = sizeof(G1Affine), kG2 = sizeof(G2Affine);
constexpr std::size_t kN8q = 48, kN8r = 32;
constexpr std::size_t kCoefRecord = 12 + kN8r;  // u32 matrix, row, signal; value
constexpr std::size_t kMpcMinimal = 64 + 4;     // csHash, no contributions

// The Groth16 header (section 2), offsets within the section.
namespace header {
constexpr std::size_t n8q = 0, q = 4, n8r = 52, r = 56, n_vars = 88, n_public = 92,
                      domain_size = 96, alpha_1 = 100, beta_1 = 196, beta_2 = 292, gamma_2 = 484,
                      delta_1 = 676, delta_2 = 772, end = 964;
}  // namespace header

// q and r as the header holds them: canonical, little-endian bytes.
void modulus_bytes(const std::uint64_t* limbs, std::size_t n8, unsigned char* out) {
  for (std::size_t i = 0; i < n8; ++i)
    out[i] = static_cast<unsigned char>(limbs[i / 8] >> (8 * (i % 8)));
}
void q_bytes(unsigned char out[kN8q]) {
  using namespace kernels::fq_detail;
  const std::uint64_t q[6] = {kQ0, kQ1, kQ2, kQ3, kQ4, kQ5};
  modulus_bytes(q, kN8q, out);
}
void r_bytes(unsigned char out[kN8r]) {
  using namespace kernels::fr_detail;
  const std::uint64_t r[4] = {kP0, kP1, kP2, kP3};
  modulus_bytes(r, kN8r, out);
}

// Coordinates copied out of file bytes (no conversion: see above).
template <typename Point>
Point load_point(const unsigned char* p) {
  Point out;
  std::memcpy(&out, p, sizeof out);
  return out;
}

std::string at_byte(std::uint64_t offset) {
  return "byte " + std::to_string(offset);
}

// Points [first, first + out.size()) of a section straight into `out`, in
// pieces on every thread (one thread's reads of a page-cached key ran at
// 1.2 GB/s: a 2^24 zkey's 13.2 GB in 10.8 s on the GPU machine), each
// piece's coordinates checked below q by the thread that read it.
template <typename Point>
Error read_range(const BinFileReader& f, const Section& s, std::size_t first, std::span<Point> out,
                 unsigned threads) {
  constexpr std::size_t kPiece = std::size_t{4} << 20;  // bytes a read
  const auto stop = detail::read_in_place(
      out.size(), std::max<std::size_t>(1, kPiece / sizeof(Point)), threads,
      [&](std::size_t at, std::size_t n) {
        return f.read(s, (first + at) * sizeof(Point), out.data() + at, n * sizeof(Point));
      },
      [&](std::size_t at, std::size_t n) {
        const auto bad =
            find_bad_point(std::span<const Point>(out.data() + at, n), PointCheck::trusted, 1);
        return at + (bad ? bad->index : n);
      });
  if (stop.error) return stop.error;
  if (stop.bad == out.size()) return {};
  const std::size_t index = first + stop.bad;
  const auto bad =
      find_bad_point(std::span<const Point>(&out[stop.bad], 1), PointCheck::trusted, 1);
  return f.error(s.id, "point " + std::to_string(index) + " (" +
                           at_byte(s.offset + index * sizeof(Point)) + "): " + bad->reason);
}

// Reads `count` points of a section straight into `out` and checks them.
template <typename Point>
Error read_points(const BinFileReader& f, const Section& s, std::size_t count,
                  PointVector<Point>& out, PointCheck check, unsigned threads) {
  try {
    out.resize(count);
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused(f.where(s.id) + ": " + std::to_string(count) + " points",
                                       count * sizeof(Point));
  }
  if (Error e = read_range(f, s, 0, std::span<Point>(out), threads)) return e;
  if (check == PointCheck::trusted) return {};
  if (auto bad = find_bad_point(std::span<const Point>(out), check, threads))
    return f.error(s.id, "point " + std::to_string(bad->index) + " (" +
                             at_byte(s.offset + bad->index * sizeof(Point)) + "): " + bad->reason);
  return {};
}

// A point of the header, checked like the sections' points.
template <typename Point>
Error header_point(const BinFileReader& f, const Section& s, const unsigned char* data,
                   std::size_t at, const char* name, PointCheck check, Point& out) {
  out = load_point<Point>(data + at);
  if (auto bad = find_bad_point(std::span<const Point>(&out, 1), check, 1))
    return f.error(s.id, std::string(name) + " (" + at_byte(s.offset + at) + "): " + bad->reason);
  return {};
}

Error check_protocol(const BinFileReader& f, const Section& s) {
  if (s.size != 4)
    return f.error(s.id, std::to_string(s.size) + " bytes, it holds one u32 (4 bytes)");
  unsigned char b[4];
  if (Error e = f.read(s, 0, b, 4)) return e;
  const std::uint32_t p = load_u32_le(b);
  if (p == kGroth16) return {};
  const std::string held = p == kPlonk ? "a PLONK key (protocol 2)"
                           : p == kFflonk
                               ? "an FFLONK key (protocol 10)"
                               : "protocol " + std::to_string(p) + ", not one snarkjs defines";
  return f.error(s.id, "the file holds " + held + "; stoker proves Groth16 (protocol 1)");
}

struct Header {
  std::uint32_t n_vars, n_public, domain_size;
};

// Section 2: the fields, their counts, and the header's points into `key`.
Result<Header> read_header(const BinFileReader& f, const Section& s, PointCheck check,
                           ProvingKey& key) {
  // A BLS12-381 header is 964 bytes; read enough of a longer one to say
  // which curve it is for (a bn128 header is 676), never an absurd size.
  std::vector<unsigned char> b(std::min<std::uint64_t>(s.size, 4096));
  if (Error e = f.read(s, 0, b.data(), b.size())) return e;
  const auto short_of = [&](std::size_t need, const char* what) {
    return f.error(s.id, std::to_string(s.size) + " bytes end before " + what + " (bytes " +
                             std::to_string(need) + " needed)");
  };
  if (b.size() < header::q) return short_of(header::q, "n8q");
  const std::uint32_t n8q = load_u32_le(b.data() + header::n8q);
  unsigned char want_q[kN8q], want_r[kN8r];
  q_bytes(want_q);
  r_bytes(want_r);
  const auto other_curve = [&](const char* field, std::size_t at, std::size_t n8) -> Error {
    std::string what = std::string("the key is not over BLS12-381: its ") + field + " is ";
    if (at + n8 <= b.size())
      what += detail::describe_modulus({b.data() + at, n8});
    else
      what += std::to_string(n8) + " bytes long";
    return f.error(s.id, what + "; stoker proves over BLS12-381 only");
  };
  if (n8q != kN8q) return other_curve("base field q", header::q, n8q);
  if (b.size() < header::n8r) return short_of(header::n8r, "the end of q");
  if (std::memcmp(b.data() + header::q, want_q, kN8q) != 0)
    return other_curve("base field q", header::q, kN8q);
  if (b.size() < header::r) return short_of(header::r, "n8r");
  const std::uint32_t n8r = load_u32_le(b.data() + header::n8r);
  if (n8r != kN8r) return other_curve("scalar field r", header::r, n8r);
  if (b.size() < header::n_vars) return short_of(header::n_vars, "the end of r");
  if (std::memcmp(b.data() + header::r, want_r, kN8r) != 0)
    return other_curve("scalar field r", header::r, kN8r);
  if (s.size != header::end)
    return f.error(s.id, std::to_string(s.size) + " bytes where a BLS12-381 Groth16 header has " +
                             std::to_string(header::end));

  Header h{load_u32_le(b.data() + header::n_vars), load_u32_le(b.data() + header::n_public),
           load_u32_le(b.data() + header::domain_size)};
  if (h.n_vars == 0 || h.n_public > h.n_vars - 1)
    return f.error(s.id, "nPublic " + std::to_string(h.n_public) + " at " +
                             at_byte(s.offset + header::n_public) +
                             " leaves no room for wire 0 among nVars " + std::to_string(h.n_vars));
  // 2^31 points at most: H lives on the odd coset of the 2n-th roots, and
  // Fr has 2^32-th roots.
  if (!std::has_single_bit(h.domain_size) || h.domain_size > (1u << 31))
    return f.error(s.id, "domainSize " + std::to_string(h.domain_size) + " at " +
                             at_byte(s.offset + header::domain_size) +
                             " is not a power of two up to 2^31");

  key.format = KeyFormat::snarkjs;
  key.num_vars = h.n_vars;
  key.num_public = h.n_public;
  key.log_n = static_cast<unsigned>(std::countr_zero(h.domain_size));
  const unsigned char* d = b.data();
  if (Error e = header_point(f, s, d, header::alpha_1, "alpha_1", check, key.vk.alpha_1)) return e;
  if (Error e = header_point(f, s, d, header::beta_1, "beta_1", check, key.beta_1)) return e;
  if (Error e = header_point(f, s, d, header::beta_2, "beta_2", check, key.vk.beta_2)) return e;
  if (Error e = header_point(f, s, d, header::gamma_2, "gamma_2", check, key.vk.gamma_2)) return e;
  if (Error e = header_point(f, s, d, header::delta_1, "delta_1", check, key.delta_1)) return e;
  if (Error e = header_point(f, s, d, header::delta_2, "delta_2", check, key.vk.delta_2)) return e;
  return h;
}

Error expect_size(const BinFileReader& f, const Section& s, std::uint64_t per_item,
                  std::uint64_t items, const std::string& count_name) {
  const std::uint64_t want = per_item * items;
  if (s.size == want) return {};
  return f.error(s.id, std::to_string(s.size) + " bytes where " + count_name + " = " +
                           std::to_string(items) + " makes " + std::to_string(per_item) + " * " +
                           std::to_string(items) + " = " + std::to_string(want));
}

struct Record {
  std::uint32_t matrix, row, signal;
  std::uint64_t value[4];
};
Record load_record(const unsigned char* p) {
  Record r{load_u32_le(p), load_u32_le(p + 4), load_u32_le(p + 8), {}};
  std::memcpy(r.value, p + 12, kN8r);
  return r;
}
bool record_ok(const Record& r, const Header& h) {
  return r.matrix <= 1 && r.row < h.domain_size && r.signal < h.n_vars && Fr::is_canonical(r.value);
}
// What is wrong with a record that is not ok.
std::string record_problem(const Record& r, const Header& h) {
  if (r.matrix > 1) return "matrix " + std::to_string(r.matrix) + " is neither 0 (A) nor 1 (B)";
  if (r.row >= h.domain_size)
    return "row " + std::to_string(r.row) + " is not below domainSize " +
           std::to_string(h.domain_size);
  if (r.signal >= h.n_vars)
    return "signal " + std::to_string(r.signal) + " is not below nVars " + std::to_string(h.n_vars);
  if (!Fr::is_canonical(r.value)) return "the value is not below r";
  return {};
}

// Section 4: a u32 count, then the records, read in pieces on `threads`
// threads (detail/read_in_pieces.hpp). A record's value is coef * 2^512 mod r; as Montgomery words
// it is the form of coef * 2^256, so one Montgomery reduction (a product with the plain integer 1)
// gives the Montgomery form of coef.
Error read_coefficients(const BinFileReader& f, const Section& s, const Header& h, unsigned threads,
                        common::UninitializedVector<MatrixEntry>& out) {
  if (s.size < 4) return f.error(s.id, std::to_string(s.size) + " bytes, shorter than its count");
  unsigned char cb[4];
  if (Error e = f.read(s, 0, cb, 4)) return e;
  const std::uint32_t n = load_u32_le(cb);
  if (s.size != 4 + kCoefRecord * std::uint64_t{n})
    return f.error(s.id, std::to_string(s.size) + " bytes where nCoef = " + std::to_string(n) +
                             " makes 4 + 44 * " + std::to_string(n) + " = " +
                             std::to_string(4 + kCoefRecord * std::uint64_t{n}));
  constexpr std::size_t kPiece = std::size_t{1} << 16;  // records: 2.75 MiB
  const Fr one_plain{{1, 0, 0, 0}};
  detail::PiecesStop stop;
  try {
    out.resize(n);
    stop = detail::read_in_pieces(
        n, kCoefRecord, kPiece, threads,
        [&](std::size_t first, std::span<unsigned char> bytes) {
          return f.read(s, 4 + first * kCoefRecord, bytes.data(), bytes.size());
        },
        [&](std::size_t i, const unsigned char* b) {
          const Record r = load_record(b);
          if (!record_ok(r, h)) return false;
          const Fr raw{{r.value[0], r.value[1], r.value[2], r.value[3]}};
          out[i] = MatrixEntry{r.matrix, r.row, r.signal, raw * one_plain};
          return true;
        });
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused(
        f.where(s.id) + ": " + std::to_string(n) + " coefficients",
        std::size_t{n} * sizeof(MatrixEntry) + std::min<std::size_t>(n, kPiece) * kCoefRecord);
  }
  if (stop.error) return stop.error;
  if (stop.bad < n)
    return f.error(s.id, "record " + std::to_string(stop.bad) + " (" +
                             at_byte(s.offset + 4 + stop.bad * kCoefRecord) +
                             "): " + record_problem(load_record(stop.record.data()), h));
  return {};
}

// The sections a key's parts lie in, by id (1 to 9).
using Sections = std::array<Section, kH + 1>;

// Everything but the queries' points: the protocol, the header, the
// sections' sizes against its counts, the coefficients and IC into `key`.
Error read_layout(const BinFileReader& f, PointCheck check, unsigned threads, ProvingKey& key,
                  Sections& sec) {
  if (f.version() != kVersion)
    return Error{Errc::invalid_argument, f.path() + ": zkey version " +
                                             std::to_string(f.version()) +
                                             "; stoker reads version 1 (snarkjs 0.7)"};
  auto protocol = f.require(kProtocol);
  if (!protocol) return std::move(protocol).error();
  if (Error e = check_protocol(f, **protocol)) return e;

  for (std::uint32_t id = kHeader; id <= kH; ++id) {
    auto s = f.require(id);
    if (!s) return std::move(s).error();
    sec[id] = **s;
  }
  auto h = read_header(f, sec[kHeader], check, key);
  if (!h) return std::move(h).error();
  const std::uint64_t n_private = std::uint64_t{h->n_vars} - h->n_public - 1;
  if (Error e = expect_size(f, sec[kIc], kG1, std::uint64_t{h->n_public} + 1, "nPublic + 1"))
    return e;
  if (Error e = expect_size(f, sec[kA], kG1, h->n_vars, "nVars")) return e;
  if (Error e = expect_size(f, sec[kB1], kG1, h->n_vars, "nVars")) return e;
  if (Error e = expect_size(f, sec[kB2], kG2, h->n_vars, "nVars")) return e;
  if (Error e = expect_size(f, sec[kC], kG1, n_private, "nVars - nPublic - 1")) return e;
  if (Error e = expect_size(f, sec[kH], kG1, h->domain_size, "domainSize")) return e;

  if (Error e = read_coefficients(f, sec[kCoefs], *h, threads, key.coefficients)) return e;
  return read_points(f, sec[kIc], h->n_public + 1, key.vk.ic, check, threads);
}

Result<ProvingKey> read_zkey_body(const std::string& path, PointCheck check, unsigned threads) {
  auto opened = BinFileReader::open(path, "zkey", section_name);
  if (!opened) return std::move(opened).error();
  const BinFileReader& f = *opened;
  ProvingKey key;
  Sections sec;
  if (Error e = read_layout(f, check, threads, key, sec)) return e;
  const std::size_t n_private = key.num_private();
  if (Error e = read_points(f, sec[kA], key.num_vars, key.a, check, threads)) return e;
  if (Error e = read_points(f, sec[kB1], key.num_vars, key.b_g1, check, threads)) return e;
  if (Error e = read_points(f, sec[kB2], key.num_vars, key.b_g2, check, threads)) return e;
  if (Error e = read_points(f, sec[kC], n_private, key.l, check, threads)) return e;
  if (Error e = read_points(f, sec[kH], key.domain_size(), key.h, check, threads)) return e;
  return key;
}

// The file form for a load onto devices (key_file.hpp).
class ZkeyKeyFile final : public KeyFile {
 public:
  ZkeyKeyFile(BinFileReader f, ProvingKey head, const Sections& sec) : f_(std::move(f)), sec_(sec) {
    head_ = std::move(head);
    counts_ = QueryCounts{head_.domain_size(), head_.num_private(), head_.num_vars, head_.num_vars,
                          head_.num_vars};
  }
  const std::string& path() const noexcept override { return f_.path(); }
  int fd() const noexcept override { return f_.fd(); }

  PointForm stored_form() const noexcept override { return PointForm::montgomery; }
  Error read(Query q, std::size_t first, std::span<G1Affine> out, unsigned threads,
             PointForm form) const override {
    if (Error e = out_of_query(q, false, first, out.size())) return e;
    if (Error e = montgomery_only(form)) return e;
    if (Error e = read_range(f_, sec_[section_of(q)], first, out, threads)) return e;
    return unchanged();
  }
  Error read_b_g2(std::size_t first, std::span<G2Affine> out, unsigned threads,
                  PointForm form) const override {
    if (Error e = out_of_query(Query::b_g2, true, first, out.size())) return e;
    if (Error e = montgomery_only(form)) return e;
    if (Error e = read_range(f_, sec_[kB2], first, out, threads)) return e;
    return unchanged();
  }

 private:
  // A zkey stores its points in Montgomery form: read as they lie.
  Error montgomery_only(PointForm form) const {
    if (form == PointForm::montgomery) return {};
    return Error{Errc::invalid_argument,
                 path() + ": a zkey's points are stored in Montgomery form, not canonical"};
  }
  static std::uint32_t section_of(Query q) {
    switch (q) {
      case Query::h:
        return kH;
      case Query::l:
        return kC;
      case Query::a:
        return kA;
      case Query::b_g1:
        return kB1;
      case Query::b_g2:
        return kB2;
    }
    return kH;
  }

  BinFileReader f_;
  Sections sec_;
};

Result<std::unique_ptr<KeyFile>> open_zkey_body(const std::string& path, unsigned threads) {
  auto opened = BinFileReader::open(path, "zkey", section_name);
  if (!opened) return std::move(opened).error();
  ProvingKey key;
  Sections sec;
  if (Error e = read_layout(*opened, PointCheck::trusted, threads, key, sec)) return e;
  return std::unique_ptr<KeyFile>(
      std::make_unique<ZkeyKeyFile>(std::move(*opened), std::move(key), sec));
}

// What is inconsistent in a key to be written, or empty.
std::string key_problem(const ProvingKey& k) {
  const auto count = [](const char* what, std::size_t have, std::size_t want) {
    return std::string(what) + " has " + std::to_string(have) + " points where the key needs " +
           std::to_string(want);
  };
  if (k.format != KeyFormat::snarkjs)
    return "the key is in bellman form (H in the monomial basis, A and B filtered by density); a "
           "zkey holds snarkjs's";
  if (k.num_vars == 0 || k.num_vars > UINT32_MAX || k.num_public + 1 > k.num_vars)
    return "num_vars " + std::to_string(k.num_vars) + " and num_public " +
           std::to_string(k.num_public) + " do not fit a zkey";
  if (k.log_n > 31) return "log_n " + std::to_string(k.log_n) + " is above 31";
  if (k.vk.ic.size() != k.num_public + 1) return count("IC", k.vk.ic.size(), k.num_public + 1);
  if (k.a.size() != k.num_vars) return count("A", k.a.size(), k.num_vars);
  if (k.b_g1.size() != k.num_vars) return count("B_G1", k.b_g1.size(), k.num_vars);
  if (k.b_g2.size() != k.num_vars) return count("B_G2", k.b_g2.size(), k.num_vars);
  if (k.l.size() != k.num_private()) return count("L", k.l.size(), k.num_private());
  if (k.h.size() != k.domain_size()) return count("H", k.h.size(), k.domain_size());
  if (k.coefficients.size() > UINT32_MAX)
    return std::to_string(k.coefficients.size()) + " coefficients, more than a zkey counts";
  for (std::size_t i = 0; i < k.coefficients.size(); ++i) {
    const MatrixEntry& c = k.coefficients[i];
    if (c.matrix > 1 || c.row >= k.domain_size() || c.signal >= k.num_vars)
      return "coefficient " + std::to_string(i) + " (matrix " + std::to_string(c.matrix) +
             ", row " + std::to_string(c.row) + ", signal " + std::to_string(c.signal) +
             ") is outside the key";
  }
  return {};
}

template <typename Point>
Error write_points(BinFileWriter& w, std::uint32_t id, std::span<const Point> points) {
  if (Error e = w.begin_section(id, points.size_bytes())) return e;
  return w.write(points.data(), points.size_bytes());
}

Error write_zkey_body(const std::string& path, const ProvingKey& k) {
  if (std::string p = key_problem(k); !p.empty())
    return Error{Errc::invalid_argument, "write_zkey: " + path + ": " + p};
  auto created = BinFileWriter::create(path, "zkey", kVersion, kMpc);
  if (!created) return std::move(created).error();
  BinFileWriter& w = *created;

  if (Error e = w.begin_section(kProtocol, 4)) return e;
  if (Error e = w.write_u32(kGroth16)) return e;

  unsigned char h[header::end] = {};
  detail::store_u32_le(kN8q, h + header::n8q);
  q_bytes(h + header::q);
  detail::store_u32_le(kN8r, h + header::n8r);
  r_bytes(h + header::r);
  detail::store_u32_le(static_cast<std::uint32_t>(k.num_vars), h + header::n_vars);
  detail::store_u32_le(static_cast<std::uint32_t>(k.num_public), h + header::n_public);
  detail::store_u32_le(static_cast<std::uint32_t>(k.domain_size()), h + header::domain_size);
  std::memcpy(h + header::alpha_1, &k.vk.alpha_1, kG1);
  std::memcpy(h + header::beta_1, &k.beta_1, kG1);
  std::memcpy(h + header::beta_2, &k.vk.beta_2, kG2);
  std::memcpy(h + header::gamma_2, &k.vk.gamma_2, kG2);
  std::memcpy(h + header::delta_1, &k.delta_1, kG1);
  std::memcpy(h + header::delta_2, &k.vk.delta_2, kG2);
  if (Error e = w.begin_section(kHeader, sizeof h)) return e;
  if (Error e = w.write(h, sizeof h)) return e;

  if (Error e = write_points<G1Affine>(w, kIc, k.vk.ic)) return e;

  // Values back to coef * 2^512 mod r: the Montgomery product with 2^512.
  const Fr r2{{kernels::fr_detail::kR20, kernels::fr_detail::kR21, kernels::fr_detail::kR22,
               kernels::fr_detail::kR23}};
  if (Error e = w.begin_section(kCoefs, 4 + kCoefRecord * k.coefficients.size())) return e;
  if (Error e = w.write_u32(static_cast<std::uint32_t>(k.coefficients.size()))) return e;
  std::vector<unsigned char> buf;
  buf.reserve(kCoefRecord * 4096);
  for (std::size_t i = 0; i < k.coefficients.size(); ++i) {
    const MatrixEntry& c = k.coefficients[i];
    unsigned char rec[kCoefRecord];
    detail::store_u32_le(c.matrix, rec);
    detail::store_u32_le(c.row, rec + 4);
    detail::store_u32_le(c.signal, rec + 8);
    const Fr raw = c.value * r2;
    std::memcpy(rec + 12, raw.l, kN8r);
    buf.insert(buf.end(), rec, rec + kCoefRecord);
    if (buf.size() == buf.capacity() || i + 1 == k.coefficients.size()) {
      if (Error e = w.write(buf.data(), buf.size())) return e;
      buf.clear();
    }
  }

  if (Error e = write_points<G1Affine>(w, kA, k.a)) return e;
  if (Error e = write_points<G1Affine>(w, kB1, k.b_g1)) return e;
  if (Error e = write_points<G2Affine>(w, kB2, k.b_g2)) return e;
  if (Error e = write_points<G1Affine>(w, kC, k.l)) return e;
  if (Error e = write_points<G1Affine>(w, kH, k.h)) return e;

  const unsigned char mpc[kMpcMinimal] = {};  // csHash zeros, 0 contributions
  if (Error e = w.begin_section(kMpc, sizeof mpc)) return e;
  if (Error e = w.write(mpc, sizeof mpc)) return e;
  return w.finish();
}

}  // namespace

Result<std::unique_ptr<KeyFile>> open_zkey(const std::string& path, unsigned threads) {
  try {
    return open_zkey_body(path, threads);
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused(path + ": opening the key");
  } catch (const std::exception& e) {
    return Error{Errc::io_error, path + ": " + e.what()};
  }
}

Result<ProvingKey> read_zkey(const std::string& path, PointCheck check, unsigned threads) {
  try {
    return read_zkey_body(path, check, threads);
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused(path + ": reading the key");
  } catch (const std::exception& e) {
    return Error{Errc::io_error, path + ": " + e.what()};
  }
}

Error write_zkey(const std::string& path, const ProvingKey& key) {
  try {
    return write_zkey_body(path, key);
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused(path + ": writing the key");
  } catch (const std::exception& e) {
    return Error{Errc::io_error, path + ": " + e.what()};
  }
}

}  // namespace stoker::engine::groth16
