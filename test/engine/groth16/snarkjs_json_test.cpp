// engine/groth16/snarkjs_json.hpp against the proof.json, public.json and
// verification_key.json files snarkjs 0.7.6's CLI wrote (data/).
#include "engine/groth16/snarkjs_json.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/groth16/detail/decimal.hpp"
#include "groth16_files_test_util.hpp"
#include "kernels/pairing.hpp"

namespace stoker::engine::groth16 {
namespace {

using kernels::Fq;
using kernels::Fr;
using kernels::G1Affine;
using kernels::G2Affine;
using nlohmann::json;
using namespace test;

constexpr const char* kCircuits[] = {"multiplier", "bits", "nopublic"};
std::string file(const char* circuit, const char* suffix) {
  return data_file(std::string(circuit) + suffix);
}

const char* kQ =
    "4002409555221667393417789825735904156556882819939007885332058136124031650490837864442687629129"
    "015664037894272559787";
const char* kR = "52435875175126190479447740508185965837690552500527637822603658699938581184513";

std::string proof_refusal(const json& doc) {
  auto p = parse_proof_json(doc.dump(), "proof.json");
  EXPECT_FALSE(p.ok()) << doc.dump() << " was read";
  return p.ok() ? std::string{} : p.error().what();
}
std::string vk_refusal(const json& doc) {
  auto p = parse_verification_key_json(doc.dump(), "vk.json");
  EXPECT_FALSE(p.ok()) << "read";
  return p.ok() ? std::string{} : p.error().what();
}

TEST(SnarkjsJson, ProofRewrittenIsSnarkjsBytes) {
  for (const char* c : kCircuits) {
    auto p = read_proof_json(file(c, "_proof.json"));
    ASSERT_TRUE(p.ok()) << p.error().what();
    EXPECT_EQ(proof_json(*p), read_text(file(c, "_proof.json"))) << c;
    ScratchDir dir;
    ASSERT_FALSE(write_proof_json(dir.path("proof.json"), *p));
    EXPECT_EQ(read_bytes(dir.path("proof.json")), read_bytes(file(c, "_proof.json"))) << c;
  }
}

TEST(SnarkjsJson, PublicRewrittenIsSnarkjsBytesEmptyOneIncluded) {
  for (const char* c : kCircuits) {
    auto v = read_public_json(file(c, "_public.json"));
    ASSERT_TRUE(v.ok()) << v.error().what();
    EXPECT_EQ(public_json(*v), read_text(file(c, "_public.json"))) << c;
  }
  EXPECT_EQ(public_json({}), "[\n]");
}

// vk_alphabeta_12 included: e(alpha_1, beta_2) from kernels::cpu::pairing
// in snarkjs's Fq12 layout, equal to what snarkjs computed.
TEST(SnarkjsJson, VerificationKeyRewrittenIsSnarkjsBytes) {
  for (const char* c : kCircuits) {
    auto vk = read_verification_key_json(file(c, "_verification_key.json"));
    ASSERT_TRUE(vk.ok()) << vk.error().what();
    EXPECT_EQ(verification_key_json(*vk), read_text(file(c, "_verification_key.json"))) << c;
  }
}

TEST(SnarkjsJson, VerificationKeyWithoutAlphaBetaReadsBackEqual) {
  auto vk = read_verification_key_json(file("multiplier", "_verification_key.json"));
  ASSERT_TRUE(vk.ok());
  const std::string text = verification_key_json(*vk, AlphaBeta::omit);
  EXPECT_EQ(text.find("vk_alphabeta_12"), std::string::npos);
  auto back = parse_verification_key_json(text, "vk");
  ASSERT_TRUE(back.ok()) << back.error().what();
  EXPECT_EQ(verification_key_json(*back), verification_key_json(*vk));
}

// The three readers agree with each other and with snarkjs: its proofs
// satisfy e(A, B) = e(alpha, beta) e(sum w_i IC_i, gamma) e(C, delta), and
// fail with a changed public value.
TEST(SnarkjsJson, SnarkjsProofsSatisfyTheGroth16Equation) {
  for (const char* c : kCircuits) {
    auto vk = read_verification_key_json(file(c, "_verification_key.json"));
    auto proof = read_proof_json(file(c, "_proof.json"));
    auto pub = read_public_json(file(c, "_public.json"));
    ASSERT_TRUE(vk.ok() && proof.ok() && pub.ok());
    const auto holds = [&](const std::vector<Fr>& inputs) {
      kernels::G1Xyzz acc = kernels::to_xyzz(vk->ic[0]);
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        std::uint64_t k[4];
        inputs[i].to_canonical(k);
        kernels::add(acc, kernels::scalar_mul(vk->ic[i + 1], k));
      }
      const kernels::PairingTerm terms[] = {{kernels::neg(proof->a), proof->b},
                                            {vk->alpha_1, vk->beta_2},
                                            {kernels::to_affine(acc), vk->gamma_2},
                                            {proof->c, vk->delta_2}};
      return kernels::cpu::pairing_product_is_one(terms);
    };
    EXPECT_TRUE(holds(*pub)) << c;
    if (!pub->empty()) {
      std::vector<Fr> changed = *pub;
      changed.back() += Fr::one();
      EXPECT_FALSE(holds(changed)) << c;
    }
  }
}

TEST(SnarkjsJson, PointAtInfinityIsWrittenAndReadAsSnarkjsDoes) {
  auto p = read_proof_json(file("multiplier", "_proof.json"));
  ASSERT_TRUE(p.ok());
  Proof q = *p;
  q.a = G1Affine::infinity();
  q.b = G2Affine::infinity();
  const std::string text = proof_json(q);
  EXPECT_NE(text.find("\"pi_a\": [\n  \"0\",\n  \"1\",\n  \"0\"\n ]"), std::string::npos) << text;
  EXPECT_NE(
      text.find("\"pi_b\": [\n  [\n   \"0\",\n   \"0\"\n  ],\n  [\n   \"1\",\n   \"0\"\n  ],\n"
                "  [\n   \"0\",\n   \"0\"\n  ]\n ]"),
      std::string::npos)
      << text;
  auto back = parse_proof_json(text, "proof.json");
  ASSERT_TRUE(back.ok()) << back.error().what();
  EXPECT_TRUE(back->a.is_infinity());
  EXPECT_TRUE(back->b.is_infinity());
}

TEST(SnarkjsJson, ProofRefusesZOtherThanZeroOrOne) {
  const json doc = json::parse(read_text(file("multiplier", "_proof.json")));
  json d = doc;
  d["pi_a"][2] = "2";
  EXPECT_TRUE(names(proof_refusal(d), {"proof.json: pi_a[2]", "z = \"2\"", "neither 0"}));
  d = doc;
  d["pi_b"][2] = json::array({"1", "1"});
  EXPECT_TRUE(names(proof_refusal(d), {"pi_b[2]", "neither [0, 0]"}));
  d = doc;
  d["pi_c"][2] = "0";  // z = 0: the point at infinity, whatever x and y say
  auto p = parse_proof_json(d.dump(), "proof.json");
  ASSERT_TRUE(p.ok()) << p.error().what();
  EXPECT_TRUE(p->c.is_infinity());
}

TEST(SnarkjsJson, ProofRefusesBadNumbersAndPointsNamingTheField) {
  const json doc = json::parse(read_text(file("multiplier", "_proof.json")));
  json d = doc;
  d["pi_a"][0] = kQ;
  EXPECT_TRUE(names(proof_refusal(d), {"pi_a[0]", "is not below q"}));
  d = doc;
  d["pi_b"][1][0] = "0x12";
  EXPECT_TRUE(names(proof_refusal(d), {"pi_b[1][0]", "'0x12' is not a decimal number"}));
  d = doc;
  d["pi_a"][1] = 5;
  EXPECT_TRUE(names(proof_refusal(d), {"pi_a[1]", "must be a decimal string"}));
  d = doc;
  d["pi_c"][1] = "7";
  EXPECT_TRUE(names(proof_refusal(d), {"proof.json: pi_c: not on the curve"}));
  d = doc;
  const G1Affine outside = g1_outside_subgroup();
  d["pi_a"] = json::array({detail::decimal(outside.x), detail::decimal(outside.y), "1"});
  EXPECT_TRUE(names(proof_refusal(d), {"pi_a: on the curve but not in G1"}));
  d = doc;
  const G2Affine outside2 = g2_outside_subgroup();
  d["pi_b"][0] = json::array({detail::decimal(outside2.x.c0), detail::decimal(outside2.x.c1)});
  d["pi_b"][1] = json::array({detail::decimal(outside2.y.c0), detail::decimal(outside2.y.c1)});
  EXPECT_TRUE(names(proof_refusal(d), {"pi_b: on the curve but not in G2"}));
  d = doc;
  d["pi_a"] = json::array({"0", "0", "1"});
  EXPECT_TRUE(names(proof_refusal(d), {"pi_a: (0, 0) is not on the curve"}));
  d = doc;
  d.erase("pi_c");
  EXPECT_TRUE(names(proof_refusal(d), {"pi_c: missing"}));
  d = doc;
  d["protocol"] = "plonk";
  EXPECT_TRUE(names(proof_refusal(d), {"protocol: \"plonk\"", "groth16"}));
  d = doc;
  d["curve"] = "bn128";
  EXPECT_TRUE(names(proof_refusal(d), {"curve: \"bn128\"", "BLS12-381"}));
  auto bad = parse_proof_json("{\"pi_a\": [", "proof.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(names(bad.error().what(), {"proof.json: not valid JSON"}));
}

TEST(SnarkjsJson, PublicRefusesValuesNotBelowROrNotDecimalStrings) {
  auto v = parse_public_json(std::string("[\"1\", \"") + kR + "\"]", "public.json");
  ASSERT_FALSE(v.ok());
  EXPECT_TRUE(names(v.error().what(), {"public.json: [1]", "not below r"}));
  v = parse_public_json("[\"1\", 2]", "public.json");
  ASSERT_FALSE(v.ok());
  EXPECT_TRUE(names(v.error().what(), {"[1]", "must be a decimal string"}));
  v = parse_public_json("[\"-1\"]", "public.json");
  ASSERT_FALSE(v.ok());
  EXPECT_TRUE(names(v.error().what(), {"[0]", "'-1' is not a decimal number"}));
  v = parse_public_json("{}", "public.json");
  ASSERT_FALSE(v.ok());
  EXPECT_TRUE(names(v.error().what(), {"must be a JSON array"}));
  v = parse_public_json(
      std::string("[\"") +
          "52435875175126190479447740508185965837690552500527637822603658699938581184512" + "\"]",
      "p");
  ASSERT_TRUE(v.ok());  // r - 1
  EXPECT_EQ((*v)[0], -Fr::one());
}

TEST(SnarkjsJson, VerificationKeyRefusesAnotherProtocolCurveOrShape) {
  const json doc = json::parse(read_text(file("multiplier", "_verification_key.json")));
  json d = doc;
  d["protocol"] = "plonk";
  EXPECT_TRUE(names(vk_refusal(d), {"vk.json: protocol: \"plonk\", not \"groth16\""}));
  d = doc;
  d["curve"] = "bn128";
  EXPECT_TRUE(names(vk_refusal(d), {"curve: \"bn128\", not \"bls12381\""}));
  d = doc;
  d.erase("curve");
  EXPECT_TRUE(names(vk_refusal(d), {"curve: missing"}));
  d = doc;
  d["nPublic"] = 3;
  EXPECT_TRUE(names(vk_refusal(d), {"IC: holds 3 points where nPublic = 3"}));
  d = doc;
  d["nPublic"] = "2";
  EXPECT_TRUE(names(vk_refusal(d), {"nPublic: \"2\" is not a non-negative integer"}));
  d = doc;
  d["nPublic"] = -1;
  EXPECT_TRUE(names(vk_refusal(d), {"nPublic: -1"}));
}

TEST(SnarkjsJson, VerificationKeyRefusesBadPointsNamingTheField) {
  const json doc = json::parse(read_text(file("multiplier", "_verification_key.json")));
  json d = doc;
  const G1Affine outside = g1_outside_subgroup();
  d["vk_alpha_1"] = json::array({detail::decimal(outside.x), detail::decimal(outside.y), "1"});
  EXPECT_TRUE(names(vk_refusal(d), {"vk_alpha_1: on the curve but not in G1"}));
  d = doc;
  d["vk_delta_2"][1][1] = "1";
  EXPECT_TRUE(names(vk_refusal(d), {"vk_delta_2: not on the curve"}));
  d = doc;
  d["vk_gamma_2"][2] = json::array({"2", "0"});
  EXPECT_TRUE(names(vk_refusal(d), {"vk_gamma_2[2]", "neither [0, 0]"}));
  d = doc;
  d["IC"][2][0] = kQ;
  EXPECT_TRUE(names(vk_refusal(d), {"IC[2][0]", "not below q"}));
  d = doc;
  d["IC"][1][1] = "3";
  EXPECT_TRUE(names(vk_refusal(d), {"IC[1]: not on the curve"}));
}

TEST(SnarkjsJson, FilesThatCannotBeReadAreIoErrors) {
  ScratchDir dir;
  auto p = read_proof_json(dir.path("none.json"));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, make_error_code(Errc::io_error));
  EXPECT_TRUE(names(p.error().what(), {"none.json", "cannot open"}));
}

}  // namespace
}  // namespace stoker::engine::groth16
