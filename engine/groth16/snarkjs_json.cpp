// snarkjs's Groth16 JSON files; see snarkjs_json.hpp.
#include "engine/groth16/snarkjs_json.hpp"

#include <exception>
#include <new>
#include <nlohmann/json.hpp>
#include <utility>

#include "common/host_memory_limit.hpp"
#include "engine/groth16/detail/decimal.hpp"
#include "engine/groth16/detail/file_io.hpp"
#include "kernels/fq12.cuh"
#include "kernels/g1_encoding.hpp"
#include "kernels/g2_encoding.hpp"
#include "kernels/pairing.hpp"

namespace stoker::engine::groth16 {
namespace {

using kernels::Fq;
using kernels::Fq2;
using kernels::Fr;
using kernels::G1Affine;
using kernels::G2Affine;
using nlohmann::json;

// ---- writing: bfj's layout with {space: 1} ---------------------------------

// A JSON value as snarkjs's files hold them: strings of digits or fixed
// words (nothing to escape), one integer, arrays and objects in order.
struct Out {
  enum class Kind { string, number, array, object };
  Kind kind = Kind::string;
  std::string text;
  std::vector<std::pair<std::string, Out>> items;  // keys empty in arrays
};

Out str(std::string s) {
  return Out{Out::Kind::string, std::move(s), {}};
}
Out number(std::size_t v) {
  return Out{Out::Kind::number, std::to_string(v), {}};
}
Out array(std::vector<Out> v) {
  Out o{Out::Kind::array, {}, {}};
  for (auto& x : v) o.items.emplace_back(std::string{}, std::move(x));
  return o;
}
Out object(std::vector<std::pair<std::string, Out>> members) {
  return Out{Out::Kind::object, {}, std::move(members)};
}

// bfj puts every element and member on its own line, indented one space
// per level, and the closing bracket on a line of its own, also for an
// empty array ("[\n]").
void emit(const Out& v, std::size_t depth, std::string& s) {
  switch (v.kind) {
    case Out::Kind::string:
      s += '"';
      s += v.text;
      s += '"';
      return;
    case Out::Kind::number:
      s += v.text;
      return;
    case Out::Kind::array:
    case Out::Kind::object:
      break;
  }
  const bool obj = v.kind == Out::Kind::object;
  s += obj ? "{\n" : "[\n";
  for (std::size_t i = 0; i < v.items.size(); ++i) {
    s.append(depth + 1, ' ');
    if (obj) s += '"' + v.items[i].first + "\": ";
    emit(v.items[i].second, depth + 1, s);
    s += i + 1 < v.items.size() ? ",\n" : "\n";
  }
  s.append(depth, ' ');
  s += obj ? '}' : ']';
}

std::string text_of(const Out& v) {
  std::string s;
  emit(v, 0, s);
  return s;
}

Out fq2_out(const Fq2& x) {
  return array({str(detail::decimal(x.c0)), str(detail::decimal(x.c1))});
}

// snarkjs writes affine points with z = 1 and the point at infinity as
// (0, 1, 0) (ffjavascript's toObject of zero).
Out g1_out(const G1Affine& p) {
  if (p.is_infinity()) return array({str("0"), str("1"), str("0")});
  return array({str(detail::decimal(p.x)), str(detail::decimal(p.y)), str("1")});
}

Out g2_out(const G2Affine& p) {
  if (p.is_infinity())
    return array(
        {array({str("0"), str("0")}), array({str("1"), str("0")}), array({str("0"), str("0")})});
  return array({fq2_out(p.x), fq2_out(p.y), array({str("1"), str("0")})});
}

Out fq6_out(const kernels::Fq6& x) {
  return array({fq2_out(x.c0), fq2_out(x.c1), fq2_out(x.c2)});
}

Error write_text(const std::string& path, const std::string& text) {
  auto f = detail::OutputFile::create(path);
  if (!f) return std::move(f).error();
  if (Error e = f->write(text.data(), text.size())) return e;
  return f->close();
}

// ---- reading ---------------------------------------------------------------

// Names the source in every message: "SOURCE: FIELD: what".
class Reader {
 public:
  explicit Reader(const std::string& source) : source_(source) {}

  Error fail(const std::string& field, const std::string& what) const {
    return Error{Errc::invalid_argument,
                 source_ + ": " + (field.empty() ? "" : field + ": ") + what};
  }

  Result<json> parse(std::string_view text) const {
    try {
      return json::parse(text.begin(), text.end());
    } catch (const json::exception& e) {
      return fail({}, std::string("not valid JSON: ") + e.what());
    }
  }

  // A member of an object that must be there.
  Result<const json*> member(const json& obj, const std::string& key) const {
    if (!obj.is_object()) return fail({}, "must be a JSON object");
    const auto it = obj.find(key);
    if (it == obj.end()) return fail(key, "missing");
    return &*it;
  }

  Result<Fq> fq(const json& v, const std::string& field) const {
    if (!v.is_string()) return fail(field, "must be a decimal string, not " + v.dump());
    auto p = detail::parse_fq(v.get_ref<const std::string&>());
    if (!p.problem.empty()) return fail(field, p.problem);
    return p.value;
  }

  Result<Fr> fr(const json& v, const std::string& field) const {
    if (!v.is_string()) return fail(field, "must be a decimal string, not " + v.dump());
    auto p = detail::parse_fr(v.get_ref<const std::string&>());
    if (!p.problem.empty()) return fail(field, p.problem);
    return p.value;
  }

  Result<Fq2> fq2(const json& v, const std::string& field) const {
    if (!v.is_array() || v.size() != 2) return fail(field, "must be [c0, c1]");
    auto c0 = fq(v[0], field + "[0]");
    if (!c0) return std::move(c0).error();
    auto c1 = fq(v[1], field + "[1]");
    if (!c1) return std::move(c1).error();
    return Fq2{*c0, *c1};
  }

  // [x, y, z], z 0 (infinity) or 1 (affine), on the curve and in G1.
  Result<G1Affine> g1(const json& v, const std::string& field) const {
    if (!v.is_array() || v.size() != 3) return fail(field, "must be a G1 point [x, y, z]");
    auto x = fq(v[0], field + "[0]");
    if (!x) return std::move(x).error();
    auto y = fq(v[1], field + "[1]");
    if (!y) return std::move(y).error();
    auto z = fq(v[2], field + "[2]");
    if (!z) return std::move(z).error();
    if (z->is_zero()) return G1Affine::infinity();
    if (*z != Fq::one())
      return fail(field + "[2]", "z = " + v[2].dump() +
                                     " is neither 0 (infinity) nor 1 (affine): stoker reads "
                                     "affine points only");
    const G1Affine p{*x, *y};
    // (0, 0) is how the kernels hold infinity; with z = 1 it is a point
    // off the curve.
    if (p.is_infinity()) return fail(field, "(0, 0) is not on the curve");
    if (auto ec = kernels::check_g1(p)) return fail(field, point_problem(ec));
    return p;
  }

  Result<G2Affine> g2(const json& v, const std::string& field) const {
    if (!v.is_array() || v.size() != 3)
      return fail(field, "must be a G2 point [[x.c0, x.c1], [y.c0, y.c1], [z.c0, z.c1]]");
    auto x = fq2(v[0], field + "[0]");
    if (!x) return std::move(x).error();
    auto y = fq2(v[1], field + "[1]");
    if (!y) return std::move(y).error();
    auto z = fq2(v[2], field + "[2]");
    if (!z) return std::move(z).error();
    if (z->c1.is_zero() && z->c0.is_zero()) return G2Affine::infinity();
    if (!z->c1.is_zero() || z->c0 != Fq::one())
      return fail(field + "[2]", "z = " + v[2].dump() +
                                     " is neither [0, 0] (infinity) nor [1, 0] (affine): stoker "
                                     "reads affine points only");
    const G2Affine p{*x, *y};
    if (p.is_infinity()) return fail(field, "(0, 0) is not on the curve");
    if (auto ec = kernels::check_g2(p)) return fail(field, point_problem(ec));
    return p;
  }

  // protocol / curve: where `required`, the field must be there.
  Error word(const json& obj, const std::string& key, const std::string& want,
             bool required) const {
    const auto it = obj.find(key);
    if (it == obj.end()) return required ? fail(key, "missing (\"" + want + "\")") : Error{};
    if (!it->is_string() || it->get_ref<const std::string&>() != want)
      return fail(key, it->dump() + ", not \"" + want + "\": stoker " +
                           (key == "curve" ? "works over BLS12-381 only" : "proves Groth16"));
    return {};
  }

 private:
  static std::string point_problem(std::error_code ec) {
    if (ec == kernels::G1Error::not_in_subgroup) return "on the curve but not in G1";
    if (ec == kernels::G2Error::not_in_subgroup) return "on the curve but not in G2";
    return "not on the curve";
  }
  const std::string& source_;
};

// A whole JSON file; 1 GiB at most (a key with millions of public inputs
// is under that).
Result<std::string> read_text(const std::string& path) {
  auto f = detail::InputFile::open(path);
  if (!f) return std::move(f).error();
  constexpr std::uint64_t kMax = std::uint64_t{1} << 30;
  if (f->size() > kMax)
    return Error{Errc::invalid_argument, path + ": " + std::to_string(f->size()) +
                                             " bytes, more than a JSON file stoker reads (1 GiB)"};
  std::string text(static_cast<std::size_t>(f->size()), '\0');
  if (Error e = f->read(0, text.data(), text.size())) return e;
  return text;
}

// Runs `body`, turning what it throws (memory, json's type errors that the
// checks above should have prevented) into an Error for `source`.
template <typename F>
auto guarded(const std::string& source, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused(source);
  } catch (const std::exception& e) {
    return Error{Errc::invalid_argument, source + ": " + e.what()};
  }
}

}  // namespace

std::string proof_json(const Proof& proof) {
  return text_of(object({{"pi_a", g1_out(proof.a)},
                         {"pi_b", g2_out(proof.b)},
                         {"pi_c", g1_out(proof.c)},
                         {"protocol", str("groth16")},
                         {"curve", str("bls12381")}}));
}

Error write_proof_json(const std::string& path, const Proof& proof) {
  return guarded(path, [&] { return write_text(path, proof_json(proof)); });
}

Result<Proof> parse_proof_json(std::string_view text, const std::string& source) {
  return guarded(source, [&]() -> Result<Proof> {
    const Reader r(source);
    auto doc = r.parse(text);
    if (!doc) return std::move(doc).error();
    if (!doc->is_object()) return r.fail({}, "must be a JSON object");
    if (Error e = r.word(*doc, "protocol", "groth16", false)) return e;
    if (Error e = r.word(*doc, "curve", "bls12381", false)) return e;
    auto a = r.member(*doc, "pi_a");
    if (!a) return std::move(a).error();
    auto pa = r.g1(**a, "pi_a");
    if (!pa) return std::move(pa).error();
    auto b = r.member(*doc, "pi_b");
    if (!b) return std::move(b).error();
    auto pb = r.g2(**b, "pi_b");
    if (!pb) return std::move(pb).error();
    auto c = r.member(*doc, "pi_c");
    if (!c) return std::move(c).error();
    auto pc = r.g1(**c, "pi_c");
    if (!pc) return std::move(pc).error();
    return Proof{*pa, *pb, *pc};
  });
}

Result<Proof> read_proof_json(const std::string& path) {
  auto text = read_text(path);
  if (!text) return std::move(text).error();
  return parse_proof_json(*text, path);
}

std::string public_json(std::span<const Fr> values) {
  std::vector<Out> v;
  v.reserve(values.size());
  for (const Fr& x : values) v.push_back(str(detail::decimal(x)));
  return text_of(array(std::move(v)));
}

Error write_public_json(const std::string& path, std::span<const Fr> values) {
  return guarded(path, [&] { return write_text(path, public_json(values)); });
}

Result<std::vector<Fr>> parse_public_json(std::string_view text, const std::string& source) {
  return guarded(source, [&]() -> Result<std::vector<Fr>> {
    const Reader r(source);
    auto doc = r.parse(text);
    if (!doc) return std::move(doc).error();
    if (!doc->is_array()) return r.fail({}, "must be a JSON array of decimal strings");
    std::vector<Fr> out;
    out.reserve(doc->size());
    for (std::size_t i = 0; i < doc->size(); ++i) {
      auto v = r.fr((*doc)[i], "[" + std::to_string(i) + "]");
      if (!v) return std::move(v).error();
      out.push_back(*v);
    }
    return out;
  });
}

Result<std::vector<Fr>> read_public_json(const std::string& path) {
  auto text = read_text(path);
  if (!text) return std::move(text).error();
  return parse_public_json(*text, path);
}

std::string verification_key_json(const VerifyingKey& vk, AlphaBeta alpha_beta) {
  std::vector<std::pair<std::string, Out>> m;
  m.emplace_back("protocol", str("groth16"));
  m.emplace_back("curve", str("bls12381"));
  m.emplace_back("nPublic", number(vk.ic.empty() ? 0 : vk.ic.size() - 1));
  m.emplace_back("vk_alpha_1", g1_out(vk.alpha_1));
  m.emplace_back("vk_beta_2", g2_out(vk.beta_2));
  m.emplace_back("vk_gamma_2", g2_out(vk.gamma_2));
  m.emplace_back("vk_delta_2", g2_out(vk.delta_2));
  if (alpha_beta == AlphaBeta::include) {
    const kernels::Fq12 e = kernels::cpu::pairing(vk.alpha_1, vk.beta_2);
    m.emplace_back("vk_alphabeta_12", array({fq6_out(e.c0), fq6_out(e.c1)}));
  }
  std::vector<Out> ic;
  ic.reserve(vk.ic.size());
  for (const G1Affine& p : vk.ic) ic.push_back(g1_out(p));
  m.emplace_back("IC", array(std::move(ic)));
  return text_of(object(std::move(m)));
}

Error write_verification_key_json(const std::string& path, const VerifyingKey& vk,
                                  AlphaBeta alpha_beta) {
  return guarded(path, [&] { return write_text(path, verification_key_json(vk, alpha_beta)); });
}

Result<VerifyingKey> parse_verification_key_json(std::string_view text, const std::string& source) {
  return guarded(source, [&]() -> Result<VerifyingKey> {
    const Reader r(source);
    auto doc = r.parse(text);
    if (!doc) return std::move(doc).error();
    if (!doc->is_object()) return r.fail({}, "must be a JSON object");
    if (Error e = r.word(*doc, "protocol", "groth16", true)) return e;
    if (Error e = r.word(*doc, "curve", "bls12381", true)) return e;
    auto np = r.member(*doc, "nPublic");
    if (!np) return std::move(np).error();
    if (!(*np)->is_number_unsigned())
      return r.fail("nPublic", (*np)->dump() + " is not a non-negative integer");
    const auto n_public = (*np)->get<std::uint64_t>();

    VerifyingKey vk;
    const auto g1 = [&](const char* key, G1Affine& out) -> Error {
      auto v = r.member(*doc, key);
      if (!v) return std::move(v).error();
      auto p = r.g1(**v, key);
      if (!p) return std::move(p).error();
      out = *p;
      return {};
    };
    const auto g2 = [&](const char* key, G2Affine& out) -> Error {
      auto v = r.member(*doc, key);
      if (!v) return std::move(v).error();
      auto p = r.g2(**v, key);
      if (!p) return std::move(p).error();
      out = *p;
      return {};
    };
    if (Error e = g1("vk_alpha_1", vk.alpha_1)) return e;
    if (Error e = g2("vk_beta_2", vk.beta_2)) return e;
    if (Error e = g2("vk_gamma_2", vk.gamma_2)) return e;
    if (Error e = g2("vk_delta_2", vk.delta_2)) return e;
    auto ic = r.member(*doc, "IC");
    if (!ic) return std::move(ic).error();
    if (!(*ic)->is_array()) return r.fail("IC", "must be an array of G1 points");
    if ((*ic)->empty() || (*ic)->size() - 1 != n_public)
      return r.fail("IC", "holds " + std::to_string((*ic)->size()) +
                              " points where nPublic = " + std::to_string(n_public) + " needs " +
                              std::to_string(n_public) + " + 1");
    vk.ic.reserve((*ic)->size());
    for (std::size_t i = 0; i < (*ic)->size(); ++i) {
      auto p = r.g1((**ic)[i], "IC[" + std::to_string(i) + "]");
      if (!p) return std::move(p).error();
      vk.ic.push_back(*p);
    }
    return vk;
  });
}

Result<VerifyingKey> read_verification_key_json(const std::string& path) {
  auto text = read_text(path);
  if (!text) return std::move(text).error();
  return parse_verification_key_json(*text, path);
}

}  // namespace stoker::engine::groth16
