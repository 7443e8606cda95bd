// A key file's points checked once per file; see groth16_key_check_once.hpp.
#include "engine/workloads/groth16_key_check_once.hpp"

#include <chrono>
#include <utility>

#include "common/elapsed.hpp"

namespace stoker::engine::workloads {

namespace g16 = engine::groth16;

const char* key_points_name(KeyPoints p) noexcept {
  switch (p) {
    case KeyPoints::checked: return "checked";
    case KeyPoints::checked_before: return "checked before";
    case KeyPoints::trusted: return "trusted";
  }
  return "?";
}

Result<KeyLoad> load_groth16_key_once(Engine& engine, g16::KeyFile& file, std::string label,
                                      const KeyCheckOnce& how) {
  KeyLoad out;
  if (!how.check_points || !how.record) {
    auto key = load_groth16_key(engine, file, std::move(label), how.check_points);
    if (!key) return key.error();
    out.key = std::move(*key);
    out.points = how.check_points ? KeyPoints::checked : KeyPoints::trusted;
    return out;
  }

  const auto start = std::chrono::steady_clock::now();
  auto digest = g16::digest_key_file(file.fd(), file.path());
  if (!digest) return digest.error();
  out.digest_s = common::seconds_since(start);

  bool recorded = false;
  if (!how.recheck) {
    auto held = how.record->contains(*digest);
    if (held)
      recorded = *held;
    else
      out.record_note = held.error().what();
  }
  // Trusted points must be the digested bytes: each read checks the file's
  // identity once its bytes are in, and a change fails the load.
  if (recorded) file.expect_unchanged(digest->identity);
  auto key = load_groth16_key(engine, file, std::move(label), !recorded);
  if (!key) return key.error();
  out.key = std::move(*key);
  if (recorded) {
    out.points = KeyPoints::checked_before;
    return out;
  }
  out.points = KeyPoints::checked;
  if (Error e = how.record->add(*digest)) out.record_note = e.what();
  return out;
}

}  // namespace stoker::engine::workloads
