// ProofService: what `stoker serve` does, apart from HTTP: proving keys
// resident on every device of one Engine, proofs queued by priority and run
// through the engine, each recorded in the journal before it is accepted.
//
// Keys: load_key reads a zkey or params file (every point checked) on a
// worker thread and puts its G1 queries on every device
// (workloads::load_groth16_key); evict_key waits for the proofs that name
// the key (running and queued ones, all accepted before the eviction) and
// frees the devices' copies. A key being evicted refuses new proofs (409).
//
// Proofs: submit checks the request (the key is known and not being
// evicted, the witness readable by the rules of the daemon: under an
// allowed directory, or a registered shared-memory region of the caller),
// records it queued in the journal and returns its id. At most
// `max_in_flight` proofs are read and in the engine at once; the rest wait
// here, highest priority first, then oldest, so that a critical proof waits
// only for those already handed to the engine (whose own queue also ranks
// by priority). A cancelled queued proof ends at once; a running one is
// cancelled through its job's cancellation slot and ends when the engine
// has drained what it started, with every byte of budget back.
//
// Restart: recover() loads the journal's keys again and queues every proof
// that had not finished, so that each accepted proof completes once.
//
// Threads: every member is called on the daemon's executor (one thread);
// blocking work (file reads, key loads) runs on the service's own workers
// and comes back to that executor.
//
// Lifetime: the engine, journal and metrics must outlive the service, and
// the executor must have stopped running its handlers before it is
// destroyed (as `stoker serve` stops its io_context first). The destructor
// waits for the workers: a key read in progress runs to its end, then
// neither its upload nor any queued read starts, so no worker touches the
// engine once the destructor has returned.
#pragma once

#include <sys/types.h>

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/engine.hpp"
#include "tools/serve/journal.hpp"
#include "tools/serve/metrics.hpp"
#include "tools/serve/refusal.hpp"
#include "tools/serve/shm_regions.hpp"

namespace stoker::serve {

struct ServiceOptions {
  std::filesystem::path state_dir;
  // Canonical directories under which key and witness paths may lie.
  std::vector<std::filesystem::path> allow_dirs;
  // How long finished proofs' results stay in the journal.
  std::chrono::seconds keep_results{std::chrono::hours(24 * 7)};
  // Proofs read and handed to the engine at once; 0: the engine's
  // lookahead plus one per device.
  std::size_t max_in_flight = 0;
  bool verify = true;        // the pairing check of every proof before it is returned
  bool trust_keys = false;   // skip the curve and subgroup checks of keys' points
  // Threads for key loads, witness reads and building proofs' jobs; 0: one
  // per proof in flight and one for key loads, so that no proof in flight
  // waits for a reader: each read and build is a pass over every wire
  // (671 MB of witness at 2^24).
  unsigned workers = 0;
};

// A witness as a request names it.
struct WitnessRequest {
  std::optional<std::string> path;  // a file under an allowed directory
  std::optional<std::string> shm_name;
  std::uint64_t shm_offset = 0, shm_bytes = 0;
  std::optional<std::string> body;  // the request's body (a witness file's bytes)
};

struct ProofRequest {
  std::string key;
  WitnessRequest witness;
  Priority priority = Priority::normal;
  std::string idempotency_key;
};

struct Submitted {
  std::string id;
  bool created = true;  // false: an earlier request with the same idempotency key
};

class ProofService {
 public:
  ProofService(boost::asio::any_io_executor executor, engine::Engine& engine, Journal& journal,
               Metrics& metrics, ServiceOptions options);
  ~ProofService();
  ProofService(const ProofService&) = delete;
  ProofService& operator=(const ProofService&) = delete;

  // Loads the journal's keys again and queues its unfinished proofs.
  Error recover();

  using KeyHandler = std::function<void(Answer<nlohmann::json>)>;
  // Completes with the key's description (201 when `created`) once the key
  // is resident, or a refusal.
  void load_key(const std::string& name, const std::string& path, const std::string& format,
                KeyHandler handler);
  nlohmann::json keys() const;
  void evict_key(const std::string& name, KeyHandler handler);

  Answer<Submitted> submit(ProofRequest request, const std::optional<uid_t>& caller);
  // GET /v1/proofs/{id}: the proof's state, timings and, once done, the
  // proof and public inputs as snarkjs writes them.
  Answer<nlohmann::json> proof(const std::string& id);
  // Completes once the proof has finished or `wait` passed, with proof(id).
  void wait_for(const std::string& id, std::chrono::milliseconds wait, KeyHandler handler);
  Answer<nlohmann::json> cancel(const std::string& id);

  // Shared memory (shm_regions.hpp), for the caller `uid`.
  Answer<nlohmann::json> register_shm(const std::string& name, std::uint64_t bytes,
                                      const std::optional<uid_t>& caller);
  Answer<nlohmann::json> unregister_shm(const std::string& name,
                                        const std::optional<uid_t>& caller);

  nlohmann::json status() const;
  // Sets the gauges that are read from the engine at each scrape.
  void refresh_gauges();
  bool ready() const noexcept;  // keys loaded as the journal says, not draining
  bool draining() const noexcept;

  // Stops starting proofs (new requests get 503), waits up to `timeout` for
  // the running ones, cancels and requeues what is still running then (the
  // journal keeps every unfinished proof queued for the next start), and
  // completes.
  void drain(std::chrono::milliseconds timeout, std::function<void()> done);

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace stoker::serve
