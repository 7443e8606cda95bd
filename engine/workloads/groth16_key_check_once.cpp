// A key file's points checked once per file; see groth16_key_check_once.hpp.
#include "engine/workloads/groth16_key_check_once.hpp"

#include <utility>

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

  auto found = how.record->look_up(file.fd(), file.path(), how.recheck);
  if (!found) return found.error();
  out.digest_s = found->digest_s;
  out.record_note = found->note;
  // Trusted points must be the digested bytes: each read checks the file's
  // identity once its bytes are in, and a change fails the load.
  if (found->recorded) file.expect_unchanged(found->digest.identity);
  auto key = load_groth16_key(engine, file, std::move(label), !found->recorded);
  if (!key) return key.error();
  out.key = std::move(*key);
  if (found->recorded) {
    out.points = KeyPoints::checked_before;
    return out;
  }
  out.points = KeyPoints::checked;
  // Recorded only if the checked bytes are the digested ones: a write since
  // the digest began changed the file's identity (its change time, which
  // only the kernel sets).
  auto now = g16::identity_of(file.fd(), file.path());
  if (!now || !(*now == found->digest.identity)) {
    out.record_note = file.path() + ": changed since its digest; not recorded as checked";
    return out;
  }
  if (Error e = how.record->add(found->digest)) out.record_note = e.what();
  return out;
}

}  // namespace stoker::engine::workloads
