// A key file's points checked once per file; see groth16_key_check_once.hpp.
#include "engine/workloads/groth16_key_check_once.hpp"

#include <chrono>
#include <exception>
#include <future>
#include <optional>
#include <system_error>
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

namespace {

// Adds the digest of a file whose points a load just checked, if the
// checked bytes are the digested ones: a write since the digest began
// changed the file's identity (its change time, which only the kernel
// sets). What went wrong, if anything, for KeyLoad::record_note.
std::string record_checked(const g16::CheckedKeys& record, const g16::KeyFile& file,
                           const g16::KeyDigest& d) {
  auto now = g16::identity_of(file.fd(), file.path());
  if (!now || !(*now == d.identity))
    return file.path() + ": changed since its digest; not recorded as checked";
  if (Error e = record.add(d)) return e.what();
  return {};
}

// The file's identity if the record cannot hold it whatever its digest (no
// entry of its size). None when it may, or when unsure (the record or the
// file's identity unreadable): the digest-first path reports what is wrong.
std::optional<g16::FileIdentity> surely_unrecorded(const g16::CheckedKeys& record,
                                                   const g16::KeyFile& file) {
  auto id = g16::identity_of(file.fd(), file.path());
  if (!id) return std::nullopt;
  auto may = record.may_hold(id->size);
  if (!may || *may) return std::nullopt;
  return *id;
}

struct TakenDigest {
  Result<g16::KeyDigest> digest;
  double seconds = 0;
};

// The digest, its failures as errors: on the digest's own thread a thrown
// exception (a thread or allocation refused) would otherwise come out of
// get() and lose a load that succeeded.
TakenDigest take_digest(const g16::KeyFile& file) {
  const auto start = std::chrono::steady_clock::now();
  try {
    auto d = g16::digest_key_file(file.fd(), file.path());
    return TakenDigest{std::move(d), common::seconds_since(start)};
  } catch (const std::exception& e) {
    return TakenDigest{Error{Errc::io_error, file.path() + ": its digest: " + e.what()},
                       common::seconds_since(start)};
  }
}

// A file that will be checked whatever its digest says: the digest (the
// CPU's pass over the file) runs beside the checked load (bound by the
// devices' checks) instead of before it, which took 2.1 s of a 30.2 GB
// key's first load on a 16-thread host. `before`: the file's identity
// before the load's first read; the digest is recorded only if the file
// still has it once both have ended (a write in between changes it), so
// that the recorded bytes are the checked ones whichever of the two
// threads read first.
Result<KeyLoad> load_checked_beside_digest(Engine& engine, g16::KeyFile& file, std::string label,
                                           const g16::CheckedKeys& record,
                                           const g16::FileIdentity& before) {
  std::future<TakenDigest> digest;
  try {
    digest = std::async(std::launch::async, [&file] { return take_digest(file); });
  } catch (const std::system_error&) {
    // No thread to spare: the digest after the load.
  }
  auto key = load_groth16_key(engine, file, std::move(label), /*check_points=*/true);
  // Joined before anything returns: the digest reads through the file's fd.
  if (digest.valid()) digest.wait();
  if (!key) return key.error();
  TakenDigest taken = digest.valid() ? digest.get() : take_digest(file);
  KeyLoad out;
  out.key = std::move(*key);
  out.points = KeyPoints::checked;
  out.digest_s = taken.seconds;
  out.digest_beside = true;
  if (!taken.digest) {
    out.record_note = taken.digest.error().what() + "; not recorded as checked";
  } else if (!(taken.digest->identity == before)) {
    out.record_note = file.path() + ": changed since its load began; not recorded as checked";
  } else {
    out.record_note = record_checked(record, file, *taken.digest);
  }
  return out;
}

}  // namespace

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
  std::optional<g16::FileIdentity> before;
  if (how.recheck) {
    if (auto id = g16::identity_of(file.fd(), file.path())) before = *id;
  } else {
    before = surely_unrecorded(*how.record, file);
  }
  if (before) return load_checked_beside_digest(engine, file, std::move(label), *how.record, *before);

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
  if (std::string note = record_checked(*how.record, file, found->digest); !note.empty())
    out.record_note = std::move(note);
  return out;
}

}  // namespace stoker::engine::workloads
