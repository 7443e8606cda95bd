// A proving key file loaded with its points checked once per file, not once
// per load: a record of checked keys (groth16/checked_keys.hpp) vouches
// for a file whose digest it holds.
//
// Checking every point on its curve and in its group is most of a key's
// read on the CPU (minutes for a large key), and on GPUs, by random
// buckets, about what a digest costs (a 2^26 key of 30.2 GB on an H100:
// 4.9-5.6 s checked with the digest beside, 3.3 s trusted); a daemon that
// restarts, or a CLI that proves again, loads the same file many times.
// The digest is one pass over the file (about 2 s for 30 GB on 16
// threads), so a file checked before loads in the digest and the trusted
// time (5.5 s), and any change to its bytes makes it a new file that is
// checked again.
//
// Thread safety: as load_groth16_key.
#pragma once

#include <string>

#include "common/error.hpp"
#include "engine/engine.hpp"
#include "engine/groth16/checked_keys.hpp"
#include "engine/groth16/key_file.hpp"
#include "engine/workloads/groth16_workload.hpp"

namespace stoker::engine::workloads {

// How a load took the key's points.
enum class KeyPoints {
  checked,         // checked on curve and group as they reached the devices
  checked_before,  // trusted: the record holds the file's digest
  trusted,         // trusted: the caller said so
};
// "checked", "checked before", "trusted".
const char* key_points_name(KeyPoints p) noexcept;

struct KeyCheckOnce {
  bool check_points = true;
  // Where checked keys are recorded; none: every load checks.
  const groth16::CheckedKeys* record = nullptr;
  // Check even when the record holds the file (and record it again).
  bool recheck = false;
};

struct KeyLoad {
  Groth16Key key;
  KeyPoints points = KeyPoints::checked;
  double digest_s = 0;  // the pass over the file for its digest (0: none)
  bool digest_beside = false;  // taken beside the checked load, not before it
  // What went wrong with the record that did not stop the load (it could
  // not be read, trusted or written): the points were checked regardless.
  std::string record_note;
};

// load_groth16_key's file form, with `how` deciding the checks. With a
// record and check_points, the file's digest is taken through its open
// descriptor: first, when the record may hold it (an entry of the file's
// size), so that a digest the record holds loads the points trusted; beside
// the checked load otherwise (or with recheck), on the CPU while the
// devices check. A load that checked the points adds the digest, if the
// file's identity is still the digest's. A file written to after its
// digest (its identity: inode, size, times, checked after each read) fails
// a trusted load naming it, with nothing left on the devices. Errors are
// load_groth16_key's, and the digest-first path's reads'; a digest taken
// beside a load that fails to read only leaves the key unrecorded.
Result<KeyLoad> load_groth16_key_once(Engine& engine, groth16::KeyFile& file, std::string label,
                                      const KeyCheckOnce& how);

}  // namespace stoker::engine::workloads
