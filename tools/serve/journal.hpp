// Journal: what `stoker serve` must not lose across a restart (kill -9
// included): the proving keys it holds and every proof it has accepted.
//
// A proof is recorded before its 202 goes out; its state moves queued ->
// running -> done | failed | cancelled, and back to queued when the daemon
// stops (or dies) before it ended. At start the daemon loads the journal's
// keys again and runs every proof that is queued or running once more, so
// that each accepted proof completes exactly once. An idempotency key maps
// to the first proof recorded with it.
//
// Behind this interface so that several nodes can later share one queue
// (PostgreSQL: FOR UPDATE SKIP LOCKED, leases, requeue of a dead node's
// work) without the service changing; sqlite_journal.hpp is the embedded
// one. Every member is safe to call from any thread; a write has reached
// stable storage when it returns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.hpp"

namespace stoker::serve {

enum class ProofState { queued, running, done, failed, cancelled };

// "queued", "running", "done", "failed", "cancelled" (the API's words).
std::string_view to_string(ProofState state) noexcept;
std::optional<ProofState> proof_state_from(std::string_view text) noexcept;
inline bool finished(ProofState s) noexcept {
  return s == ProofState::done || s == ProofState::failed || s == ProofState::cancelled;
}

// Higher runs first.
enum class Priority { low = 0, normal = 1, high = 2, critical = 3 };
std::string_view to_string(Priority priority) noexcept;  // "low" ... "critical"
std::optional<Priority> priority_from(std::string_view text) noexcept;

// A proving key the daemon holds resident (POST /v1/keys).
struct KeyRecord {
  std::string name;
  std::string path;
  std::string format;             // "zkey" or "bellman"
  std::int64_t loaded_at_ms = 0;  // Unix time in milliseconds
};

// Where a proof's witness is: a file (a client's, or the daemon's own copy
// of a request body under its state directory, which it deletes with the
// record), or a region of a POSIX shared-memory object.
struct WitnessSource {
  enum class Kind { file, shm };
  Kind kind = Kind::file;
  std::string path;          // file
  bool owned = false;        // file: the daemon's copy, deleted when the record goes
  std::string shm_name;      // shm
  std::uint64_t offset = 0;  // shm
  std::uint64_t bytes = 0;   // shm
  // shm: the uid that owns the object (checked when the daemon opens it
  // again after a restart); -1 for files.
  std::int64_t owner_uid = -1;
};

struct ProofRecord {
  std::string id;
  std::string key;  // KeyRecord::name
  WitnessSource witness;
  Priority priority = Priority::normal;
  std::string idempotency_key;  // empty: none
  ProofState state = ProofState::queued;
  std::int64_t accepted_at_ms = 0, started_at_ms = 0, finished_at_ms = 0;  // 0: not yet
  unsigned attempts = 0;  // times it was started (a restart may start it again)
  // Once finished: the proof and public inputs exactly as snarkjs writes
  // proof.json and public.json (done), why it failed or was cancelled, and
  // the timings object of GET /v1/proofs/{id} as JSON text.
  std::string proof_json, public_json, error, timings_json;
};

class Journal {
 public:
  virtual ~Journal() = default;

  // Keys: put inserts or replaces the record of that name.
  virtual Error put_key(const KeyRecord& key) = 0;
  virtual Error remove_key(std::string_view name) = 0;  // none of that name: no error
  virtual Result<std::vector<KeyRecord>> keys() = 0;    // by name

  // Records `proof` (state queued) and returns the record as stored: its
  // id, key, witness, priority, idempotency key and accepted_at_ms; state
  // queued, no start or finish, attempts 0 and empty results, whatever
  // `proof` held there. With a non-empty idempotency key that an earlier
  // record carries, records nothing and returns that record with created =
  // false (one record however many accepts race with the key). An empty id
  // or an id already recorded is an invalid_argument error.
  struct Accepted {
    ProofRecord record;
    bool created = false;
  };
  virtual Result<Accepted> accept(const ProofRecord& proof) = 0;

  // Errors of the three moves below: an unknown id, or a proof that has
  // already finished (it ends once), is invalid_argument naming the id.

  // queued -> running: started_at_ms, attempts + 1. A proof found running
  // (the daemon died while it ran) may be started again the same way.
  virtual Error mark_running(std::string_view id, std::int64_t at_ms) = 0;
  // The end of a proof, queued or running: state (done, failed or
  // cancelled; another state is invalid_argument), finished_at_ms,
  // proof_json, public_json, error and timings_json from `proof`.
  virtual Error finish(const ProofRecord& proof) = 0;
  // running -> queued (the daemon stops before the proof ended):
  // started_at_ms back to 0, attempts kept. A queued proof stays queued.
  virtual Error requeue(std::string_view id) = 0;

  // nullopt: no proof of that id (never accepted, or purged).
  virtual Result<std::optional<ProofRecord>> proof(std::string_view id) = 0;
  // The proof an idempotency key was first accepted with (nullopt: none, or
  // an empty key), so that a retry is answered before its witness is looked
  // at again.
  virtual Result<std::optional<ProofRecord>> proof_by_idempotency_key(std::string_view key) = 0;
  // Queued and running proofs in the order accept() recorded them (not by
  // accepted_at_ms, which a clock step may reorder): what a restart runs again.
  virtual Result<std::vector<ProofRecord>> unfinished() = 0;
  // Counts by state, for status and metrics: every state once, in the
  // enum's order, zero counts included.
  virtual Result<std::vector<std::pair<ProofState, std::size_t>>> counts() = 0;
  // Deletes finished proofs that finished before `before_ms` and returns
  // them in the order they were recorded (so that the caller can delete the
  // witness copies it owned). Queued and running proofs stay.
  virtual Result<std::vector<ProofRecord>> purge_finished_before(std::int64_t before_ms) = 0;
};

}  // namespace stoker::serve
