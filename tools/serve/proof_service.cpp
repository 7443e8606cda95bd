// ProofService; see proof_service.hpp.
#include "tools/serve/proof_service.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <span>
#include <system_error>

#include "common/os_random.hpp"
#include "engine/groth16/bellman_witness_file.hpp"
#include "engine/groth16/params_file.hpp"
#include "engine/groth16/proof.hpp"
#include "engine/groth16/snarkjs_json.hpp"
#include "engine/groth16/wtns_file.hpp"
#include "engine/groth16/zkey_file.hpp"
#include "engine/workloads/groth16_key_check_once.hpp"
#include "engine/workloads/groth16_workload.hpp"

namespace stoker::serve {

namespace asio = boost::asio;
namespace g16 = engine::groth16;
namespace wl = engine::workloads;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

std::int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// 128 bits from the OS's CSPRNG, as 32 hex digits: ids nobody can guess.
std::string new_id() {
  unsigned char b[16];
  if (const std::error_code ec = common::os_random(std::as_writable_bytes(std::span(b))))
    throw std::system_error(ec, "getrandom");
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (unsigned char c : b) {
    s += hex[c >> 4];
    s += hex[c & 15];
  }
  return s;
}

bool valid_key_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-';
  });
}

unsigned status_for(const Error& e) {
  if (e.code == Errc::out_of_device_memory || e.code == Errc::out_of_host_memory) return 507;
  if (e.code == Errc::shutting_down) return 503;
  return 400;
}

}  // namespace

struct ProofService::State : std::enable_shared_from_this<ProofService::State> {
  struct Key {
    KeyRecord record;
    enum class Phase { loading, ready, evicting } phase = Phase::loading;
    wl::Groth16Key resident;
    double read_ms = 0, upload_ms = 0, digest_ms = 0;
    wl::KeyPoints points = wl::KeyPoints::checked;
    Clock::time_point load_started = Clock::now(), loaded_at;
    std::vector<KeyHandler> load_waiters;
    std::vector<KeyHandler> evict_waiters;
    std::size_t proofs = 0;  // queued and running proofs that name it
    std::string error;       // why the last load failed
  };

  struct Waiter {
    std::shared_ptr<asio::steady_timer> timer;
    KeyHandler handler;
  };

  struct Proof {
    ProofRecord record;
    std::optional<uid_t> caller;
    enum class Phase { queued, reading, running } phase = Phase::queued;
    std::uint64_t seq = 0;
    Clock::time_point accepted = Clock::now(), started, key_ready;
    bool cancel_requested = false;
    bool requeue_on_end = false;  // drained: back to queued for the next start
    bool shm_acquired = false;    // holds a user count of its shared-memory region
    bool read_posted = false;     // its witness's read went to a worker at acceptance
    asio::cancellation_signal cancel;
    std::vector<Waiter> waiters;
    double read_ms = 0;
  };

  asio::any_io_executor executor;
  engine::Engine& engine;
  Journal& journal;
  Metrics& metrics;
  ServiceOptions options;
  // Key files whose points were checked, by digest: a restart, or a key
  // loaded again, skips the checks (11 s of a 2^26 key's 15 on an H100).
  g16::CheckedKeys checked_keys;
  asio::thread_pool workers;
  ShmRegions shm;
  std::map<std::string, std::unique_ptr<Key>> keys;
  std::map<std::string, std::unique_ptr<Proof>> proofs;  // unfinished ones
  // Waiting to start: (-priority, arrival) -> id.
  std::map<std::pair<int, std::uint64_t>, std::string> queue;
  std::uint64_t next_seq = 0;
  std::size_t in_flight = 0;  // reading or in the engine
  bool draining = false;
  bool recovered_keys_loading = false;
  std::size_t keys_to_recover = 0;
  Clock::time_point started_at = Clock::now();
  std::vector<double> device_kernel_ms;  // per engine device, since start

  Counter& accepted_total;
  Counter& proofs_total;
  Histogram& stage_seconds;
  Histogram& key_load_seconds;
  Gauge& queue_depth;
  Gauge& running;
  Gauge& device_busy;
  Gauge& resident_bytes;
  Gauge& pinned_bytes;
  Gauge& device_budget_bytes;
  Gauge& host_budget_bytes;

  State(asio::any_io_executor ex, engine::Engine& e, Journal& j, Metrics& m, ServiceOptions o)
      : executor(std::move(ex)),
        engine(e),
        journal(j),
        metrics(m),
        options(std::move(o)),
        checked_keys(options.state_dir / "checked-keys"),
        workers(options.workers ? options.workers
                                : static_cast<unsigned>(std::min<std::size_t>(
                                      256, max_in_flight_of(options, e) + 1))),
        accepted_total(m.counter("stoker_proofs_accepted_total", "Proof requests accepted", {})),
        proofs_total(m.counter("stoker_proofs_total", "Proofs that ended, by outcome", {"outcome"})),
        stage_seconds(m.histogram("stoker_proof_stage_seconds",
                                  "Time of each stage of a proof, from acceptance to its end",
                                  {"stage"},
                                  {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
                                   120, 300})),
        key_load_seconds(m.histogram("stoker_key_load_seconds",
                                     "Time to read a proving key and make it resident", {},
                                     {0.1, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160})),
        queue_depth(m.gauge("stoker_queue_depth", "Proofs waiting to start, by priority",
                            {"priority"})),
        running(m.gauge("stoker_proofs_running", "Proofs read or in the engine", {})),
        device_busy(m.gauge("stoker_device_busy_ratio",
                            "Fraction of time since start each device's kernels ran",
                            {"device"})),
        resident_bytes(m.gauge("stoker_key_resident_bytes",
                               "Bytes of each resident key's points on each device",
                               {"key", "device"})),
        pinned_bytes(m.gauge("stoker_pinned_bytes", "Pinned host memory of the engine's pool",
                             {"state"})),
        device_budget_bytes(m.gauge("stoker_device_budget_bytes",
                                    "Each device's memory budget: its limit and what is in use",
                                    {"device", "kind"})),
        host_budget_bytes(m.gauge("stoker_host_budget_bytes",
                                  "The host memory budget of pinned blocks: limit and in use",
                                  {"kind"})) {
    device_kernel_ms.assign(engine.devices().size(), 0);
    for (auto p : {Priority::critical, Priority::high, Priority::normal, Priority::low})
      queue_depth.set({std::string(to_string(p))}, 0);
    running.set({}, 0);
    for (auto outcome : {"done", "failed", "cancelled"}) proofs_total.add({outcome}, 0);
  }

  ~State() { workers.join(); }

  // Set once the service is being destroyed, when the engine may go next:
  // a worker then starts no read and no upload.
  std::atomic<bool> closed{false};

  // Waits for what the workers are doing. A key's read in progress runs to
  // its end (a blocking read cannot be interrupted); its upload and any
  // queued work are skipped.
  void close() {
    closed = true;
    workers.join();
  }

  // ---- keys ----------------------------------------------------------------

  json describe(const Key& k) const {
    json j{{"name", k.record.name},
           {"path", k.record.path},
           {"format", k.record.format},
           {"state", k.phase == Key::Phase::loading   ? "loading"
                     : k.phase == Key::Phase::ready   ? "ready"
                                                      : "evicting"}};
    if (k.phase != Key::Phase::loading && k.resident.key) {
      const auto& key = *k.resident.key;
      j["log_n"] = key.log_n;
      j["constraints_domain"] = std::size_t{1} << key.log_n;
      j["wires"] = key.num_vars;
      j["public"] = key.num_public;
      j["g1_points"] = k.resident.g1_points();
      j["g2_points"] = k.resident.g2_points();
      j["resident_bytes_per_device"] = k.resident.points.bytes();
      j["devices"] = engine.devices().size();
      j["read_ms"] = k.read_ms;
      j["upload_ms"] = k.upload_ms;
      j["load_ms"] = k.read_ms + k.upload_ms;
      // How the points were taken: "checked" as they reached the devices,
      // "checked_before" (the file's digest was checked before; digest_ms is
      // the pass over the file, inside upload_ms) or "trusted" (--trust-keys).
      j["points"] = k.points == wl::KeyPoints::checked_before ? "checked_before"
                                                              : wl::key_points_name(k.points);
      j["digest_ms"] = k.digest_ms;
      j["proofs_pending"] = k.proofs;
    }
    return j;
  }

  Answer<std::string> allowed(const std::string& path, const char* what) const {
    std::error_code ec;
    const auto canonical = std::filesystem::weakly_canonical(path, ec);
    if (ec || path.empty() || path[0] != '/')
      return Refusal{400, std::string(what) + " path '" + path + "' is not an absolute path"};
    for (const auto& dir : options.allow_dirs) {
      const auto rel = canonical.lexically_relative(dir);
      if (!rel.empty() && *rel.begin() != ".." && rel.is_relative()) return canonical.string();
    }
    return Refusal{403, std::string(what) + " path " + path +
                            " is outside the directories this daemon may read (--allow-dir)"};
  }

  void load_key(const std::string& name, const std::string& path, const std::string& format,
                KeyHandler handler, bool recovering = false) {
    if (!valid_key_name(name))
      return handler(Refusal{400, "key name '" + name + "' is not 1-64 of [A-Za-z0-9._-]"});
    if (format != "zkey" && format != "bellman")
      return handler(Refusal{400, "key format '" + format + "' is not zkey or bellman"});
    if (draining && !recovering) return handler(Refusal{503, "the daemon is draining"});
    auto where = allowed(path, "key");
    if (!where) return handler(where.refusal);
    if (auto it = keys.find(name); it != keys.end()) {
      Key& k = *it->second;
      if (k.record.path != *where.value || k.record.format != format)
        return handler(Refusal{409, "key '" + name + "' is loaded from " + k.record.path +
                                        " already; DELETE /v1/keys/" + name + " first"});
      if (k.phase == Key::Phase::evicting)
        return handler(Refusal{409, "key '" + name + "' is being evicted"});
      if (k.phase == Key::Phase::loading) return k.load_waiters.push_back(std::move(handler));
      json j = describe(k);
      j["created"] = false;
      return handler(std::move(j));
    }
    auto key = std::make_unique<Key>();
    key->record = KeyRecord{name, *where.value, format, 0};
    key->load_waiters.push_back(std::move(handler));
    keys.emplace(name, std::move(key));
    asio::post(workers, [self = shared_from_this(), name, path = *where.value, format] {
      self->read_and_upload(name, path, format);
    });
  }

  // On a worker: open the key's file (its head, counts and a zkey's
  // coefficients read and checked), then make it resident, its points read
  // from the file straight into the pinned blocks on their way (blocks
  // until every device holds it). The host never holds the whole key.
  void read_and_upload(const std::string& name, const std::string& path, const std::string& format) {
    if (closed) return;
    const auto t0 = Clock::now();
    auto file = format == "zkey" ? g16::open_zkey(path) : g16::open_params(path);
    const auto t1 = Clock::now();
    if (closed) return;
    // The points' encoding and range checked as they are read, their curve
    // and group as they reach the devices (on GPUs in seconds what takes
    // the CPU minutes).
    Result<wl::KeyLoad> resident = Error{};
    if (file)
      resident = wl::load_groth16_key_once(
          engine, **file, "key " + name,
          {.check_points = !options.trust_keys, .record = &checked_keys});
    else
      resident = std::move(file).error();
    const auto t2 = Clock::now();
    asio::post(executor, [self = shared_from_this(), name, resident = std::move(resident),
                          read_ms = ms_between(t0, t1), upload_ms = ms_between(t1, t2)]() mutable {
      self->key_loaded(name, std::move(resident), read_ms, upload_ms);
    });
  }

  void key_loaded(const std::string& name, Result<wl::KeyLoad> resident, double read_ms,
                  double upload_ms) {
    auto it = keys.find(name);
    if (it == keys.end()) return;
    Key& k = *it->second;
    auto waiters = std::move(k.load_waiters);
    k.load_waiters.clear();
    if (!resident) {
      const Error e = resident.error();
      for (auto& w : waiters) w(Refusal{status_for(e), "key '" + name + "': " + e.what()});
      fail_proofs_of(name, "key '" + name + "' could not be loaded: " + e.what());
      keys.erase(it);
      pump();
      return;
    }
    k.resident = std::move(resident->key);
    k.points = resident->points;
    k.digest_ms = resident->digest_s * 1e3;
    if (!resident->record_note.empty())
      std::fprintf(stderr, "stoker serve: key '%s': the record of checked keys: %s\n",
                   name.c_str(), resident->record_note.c_str());
    k.read_ms = read_ms;
    k.upload_ms = upload_ms;
    k.loaded_at = Clock::now();
    k.phase = Key::Phase::ready;
    k.record.loaded_at_ms = unix_ms();
    key_load_seconds.observe({}, (read_ms + upload_ms) / 1e3);
    if (Error e = journal.put_key(k.record)) {
      // Resident but not recorded: it would not come back after a restart.
      for (auto& w : waiters) w(Refusal{500, "key '" + name + "': journal: " + e.what()});
      begin_evict(k);
      return;
    }
    json j = describe(k);
    j["created"] = true;
    for (auto& w : waiters) w(j);
    pump();
  }

  void evict_key(const std::string& name, KeyHandler handler) {
    auto it = keys.find(name);
    if (it == keys.end()) return handler(Refusal{404, "no key '" + name + "'"});
    Key& k = *it->second;
    if (k.phase == Key::Phase::loading)
      return handler(Refusal{409, "key '" + name + "' is still loading"});
    k.evict_waiters.push_back(std::move(handler));
    if (k.phase == Key::Phase::evicting) return;
    begin_evict(k);
  }

  void begin_evict(Key& k) {
    k.phase = Key::Phase::evicting;
    if (k.proofs == 0) finish_evict(k.record.name);
  }

  // Once no proof names the key: free the devices' copies, then forget it.
  void finish_evict(const std::string& name) {
    auto it = keys.find(name);
    if (it == keys.end()) return;
    const std::size_t bytes = it->second->resident.points.bytes();
    engine.async_evict_srs(
        it->second->resident.points,
        asio::bind_executor(executor, [self = shared_from_this(), name,
                                       bytes](boost::system::error_code ec) {
          auto it = self->keys.find(name);
          if (it == self->keys.end()) return;
          auto waiters = std::move(it->second->evict_waiters);
          Error journal_error = self->journal.remove_key(name);
          self->keys.erase(it);
          self->resident_bytes.clear();
          for (auto& w : waiters) {
            if (ec)
              w(Refusal{500, "key '" + name + "': eviction failed: " + ec.message()});
            else if (journal_error)
              w(Refusal{500, "key '" + name + "' evicted, but the journal still lists it: " +
                                 journal_error.what()});
            else
              w(json{{"name", name}, {"evicted", true}, {"freed_bytes_per_device", bytes}});
          }
        }));
  }

  // ---- proofs --------------------------------------------------------------

  Answer<Submitted> submit(ProofRequest req, const std::optional<uid_t>& caller) {
    if (draining) return Refusal{503, "the daemon is draining: it takes no new proofs"};
    // A retry gets its first request's id whatever became of that request's
    // key or witness since (a shared-memory region is registered again
    // after a restart, a key may be gone).
    if (!req.idempotency_key.empty()) {
      auto earlier = journal.proof_by_idempotency_key(req.idempotency_key);
      if (!earlier) return Refusal{500, "journal: " + earlier.error().what()};
      if (*earlier) return Submitted{(*earlier)->id, false};
    }
    auto kit = keys.find(req.key);
    if (kit == keys.end()) return Refusal{404, "no key '" + req.key + "' (POST /v1/keys first)"};
    if (kit->second->phase == Key::Phase::evicting)
      return Refusal{409, "key '" + req.key + "' is being evicted"};
    const int sources = req.witness.path.has_value() + req.witness.shm_name.has_value() +
                        req.witness.body.has_value();
    if (sources != 1)
      return Refusal{400, "a proof needs exactly one witness: a path, a shared-memory region or "
                          "the request's body"};
    ProofRecord r;
    r.id = new_id();
    r.key = req.key;
    r.priority = req.priority;
    r.idempotency_key = std::move(req.idempotency_key);
    r.accepted_at_ms = unix_ms();
    std::optional<g16::FileWindow> window;
    if (req.witness.path) {
      auto where = allowed(*req.witness.path, "witness");
      if (!where) return where.refusal;
      struct stat st {};
      if (::stat(where.value->c_str(), &st) != 0)
        return Refusal{400, "witness " + *req.witness.path + ": " +
                                std::generic_category().message(errno)};
      if (!S_ISREG(st.st_mode))
        return Refusal{400, "witness " + *req.witness.path + " is not a regular file"};
      r.witness.kind = WitnessSource::Kind::file;
      r.witness.path = *where.value;
    } else if (req.witness.shm_name) {
      auto w = shm.acquire(*req.witness.shm_name, req.witness.shm_offset, req.witness.shm_bytes,
                           caller);
      if (!w) return w.refusal;
      window = *w.value;
      r.witness.kind = WitnessSource::Kind::shm;
      r.witness.shm_name = *req.witness.shm_name;
      r.witness.offset = req.witness.shm_offset;
      r.witness.bytes = req.witness.shm_bytes;
      r.witness.owner_uid = *caller;
    } else {
      if (req.witness.body->empty()) return Refusal{400, "the request's body (the witness) is empty"};
      // The body is kept under the state directory so that the proof can
      // run again after a restart.
      const auto dir = options.state_dir / "witnesses";
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      const auto path = dir / (r.id + (kit->second->record.format == "zkey" ? ".wtns" : ".bwit"));
      if (Error e = write_durably(path, *req.witness.body))
        return Refusal{507, "cannot keep the witness: " + e.what()};
      r.witness.kind = WitnessSource::Kind::file;
      r.witness.path = path.string();
      r.witness.owned = true;
    }
    // A proof that will start at once has its witness read, and its job
    // built, on a worker while the acceptance's synced commit runs here: the
    // commit's fsync then overlaps the read instead of adding to a lone
    // client's latency (0.1 ms on the GPU machine's disk, milliseconds on
    // disks that sync slower). Should the acceptance fail or name an
    // earlier request, the read's result finds no proof and is dropped.
    const bool read_ahead = r.witness.kind == WitnessSource::Kind::file && !draining &&
                            queue.empty() && in_flight < max_in_flight() &&
                            kit->second->phase == Key::Phase::ready;
    if (read_ahead) post_read(r.id, r.witness.path, std::nullopt, *kit->second, r.priority);
    auto accepted = journal.accept(r);
    if (!accepted) {
      if (window) shm.release(r.witness.shm_name);
      if (r.witness.owned) std::filesystem::remove(r.witness.path);
      return Refusal{500, "journal: " + accepted.error().what()};
    }
    if (!accepted->created) {
      if (window) shm.release(r.witness.shm_name);
      if (r.witness.owned) std::filesystem::remove(r.witness.path);
      return Submitted{accepted->record.id, false};
    }
    accepted_total.add({});
    enqueue(std::move(r), caller, /*shm_acquired=*/window.has_value(), read_ahead);
    pump();
    return Submitted{accepted->record.id, true};
  }

  static Error write_durably(const std::filesystem::path& path, const std::string& bytes) {
    const std::string tmp = path.string() + ".part";
    std::FILE* f = std::fopen(tmp.c_str(), "wbx");
    if (!f) return Error{Errc::io_error, tmp + ": " + std::generic_category().message(errno)};
    const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size() &&
                    std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
    const int e = errno;
    std::fclose(f);
    if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
      std::remove(tmp.c_str());
      return Error{Errc::io_error, path.string() + ": " + std::generic_category().message(e)};
    }
    return {};
  }

  void enqueue(ProofRecord r, const std::optional<uid_t>& caller, bool shm_acquired,
               bool read_posted = false) {
    auto p = std::make_unique<Proof>();
    p->record = std::move(r);
    p->caller = caller;
    p->seq = next_seq++;
    p->shm_acquired = shm_acquired;
    p->read_posted = read_posted;
    if (auto k = keys.find(p->record.key); k != keys.end()) ++k->second->proofs;
    queue.emplace(std::make_pair(-static_cast<int>(p->record.priority), p->seq), p->record.id);
    proofs.emplace(p->record.id, std::move(p));
    update_queue_gauges();
  }

  void update_queue_gauges() {
    std::map<Priority, std::size_t> depth;
    for (const auto& [rank, id] : queue) ++depth[proofs.at(id)->record.priority];
    for (auto p : {Priority::critical, Priority::high, Priority::normal, Priority::low})
      queue_depth.set({std::string(to_string(p))}, static_cast<double>(depth[p]));
    running.set({}, static_cast<double>(in_flight));
  }

  static std::size_t max_in_flight_of(const ServiceOptions& o, engine::Engine& e) {
    return o.max_in_flight ? o.max_in_flight : e.lookahead() + e.devices().size();
  }
  std::size_t max_in_flight() const { return max_in_flight_of(options, engine); }

  // Starts the highest-ranked queued proofs whose keys are resident, while
  // there is room.
  void pump() {
    if (draining) return;
    for (auto it = queue.begin(); it != queue.end() && in_flight < max_in_flight();) {
      Proof& p = *proofs.at(it->second);
      auto k = keys.find(p.record.key);
      if (k == keys.end()) {
        const std::string id = it->second;
        it = queue.erase(it);
        end_proof(id, ProofState::failed, "key '" + p.record.key + "' is not loaded");
        continue;
      }
      if (k->second->phase == Key::Phase::loading) {
        ++it;
        continue;
      }
      const std::string id = it->second;
      it = queue.erase(it);
      start(p, *k->second);
    }
    update_queue_gauges();
  }

  void start(Proof& p, Key& k) {
    p.phase = Proof::Phase::reading;
    p.started = Clock::now();
    p.key_ready = std::max(p.accepted, k.loaded_at);
    ++in_flight;
    if (Error e = journal.mark_running(p.record.id, unix_ms())) {
      --in_flight;
      return end_proof(p.record.id, ProofState::failed, "journal: " + e.what());
    }
    p.record.state = ProofState::running;
    ++p.record.attempts;
    std::optional<g16::FileWindow> window;
    if (p.record.witness.kind == WitnessSource::Kind::shm) {
      if (!p.shm_acquired) {
        // After a restart: open the object again, as its recorded owner.
        const auto owner = static_cast<uid_t>(p.record.witness.owner_uid);
        if (!shm.regions().count(p.record.witness.shm_name)) {
          auto added = shm.add(p.record.witness.shm_name,
                               p.record.witness.offset + p.record.witness.bytes, owner);
          if (!added) {
            --in_flight;
            return end_proof(p.record.id, ProofState::failed,
                             "the witness's shared memory: " + added.refusal.message);
          }
        }
        auto w = shm.acquire(p.record.witness.shm_name, p.record.witness.offset,
                             p.record.witness.bytes, owner);
        if (!w) {
          --in_flight;
          return end_proof(p.record.id, ProofState::failed,
                           "the witness's shared memory: " + w.refusal.message);
        }
        p.shm_acquired = true;
      }
      window = g16::FileWindow{shm.regions().at(p.record.witness.shm_name).fd,
                               "shm:" + p.record.witness.shm_name, p.record.witness.offset,
                               p.record.witness.bytes};
    }
    if (!p.read_posted) post_read(p.record.id, p.record.witness.path, window, k, p.record.priority);
    p.read_posted = true;
  }

  // On a worker: reads proof `id`'s witness (its file, or `window` of a
  // shared-memory object) and builds its job, then hands both to
  // witness_read on the executor. The job is built on the worker too:
  // splitting the witness's scalars and packing them is a pass over every
  // wire (tens of millions at 2^24), which on the executor would hold up
  // every connection and the engine's own completions meanwhile.
  void post_read(const std::string& proof_id, const std::string& witness_path,
                 std::optional<g16::FileWindow> window, const Key& k, Priority priority) {
    const bool snarkjs = k.resident.key->format == g16::KeyFormat::snarkjs;
    wl::Groth16Options o = wl::groth16_options_on(engine, k.resident);
    o.verify = options.verify;
    o.priority = static_cast<int>(priority);
    o.name = "proof " + proof_id;
    const std::size_t num_public = k.resident.key->num_public;
    asio::post(workers, [self = shared_from_this(), id = proof_id, path = witness_path, window,
                         snarkjs, o = std::move(o), num_public]() mutable {
      if (self->closed) return;
      const auto t0 = Clock::now();
      auto made = std::make_shared<MadeJob>();
      if (snarkjs) {
        auto w = window ? g16::read_wtns(*window) : g16::read_wtns(path);
        if (w) o.witnesses.push_back(std::make_shared<const g16::WitnessValues>(std::move(*w)));
        else made->witness_error = w.error();
      } else {
        auto w = window ? g16::read_bellman_witness(*window) : g16::read_bellman_witness(path);
        if (w) o.bellman_witnesses.push_back(std::make_shared<const g16::BellmanWitness>(std::move(*w)));
        else made->witness_error = w.error();
      }
      made->read_ms = ms_between(t0, Clock::now());
      if (!made->witness_error) {
        // The public inputs as snarkjs writes public.json: the wires after
        // the constant 1.
        if (!o.witnesses.empty() && o.witnesses[0]->size() > num_public)
          made->inputs.assign(o.witnesses[0]->begin() + 1,
                              o.witnesses[0]->begin() + 1 + static_cast<long>(num_public));
        if (!o.bellman_witnesses.empty() && !o.bellman_witnesses[0]->inputs.empty())
          made->inputs.assign(o.bellman_witnesses[0]->inputs.begin() + 1,
                              o.bellman_witnesses[0]->inputs.end());
        made->job = wl::make_groth16_job(o, made->run);
      }
      asio::post(self->executor, [self, id, made] { self->witness_read(id, *made); });
    });
  }

  // What a worker made of a proof's witness: the read's error, or the job.
  struct MadeJob {
    Error witness_error;
    double read_ms = 0;
    Result<engine::Job> job = Error{};
    std::shared_ptr<wl::Groth16Run> run;
    std::vector<kernels::Fr> inputs;
  };

  void witness_read(const std::string& id, MadeJob& made) {
    auto pit = proofs.find(id);
    if (pit == proofs.end()) return;
    Proof& p = *pit->second;
    p.read_ms = made.read_ms;
    if (p.requeue_on_end) return back_to_queue(p);
    if (p.cancel_requested) return finish_in_flight(p, ProofState::cancelled, "cancelled", {});
    if (made.witness_error)
      return finish_in_flight(p, ProofState::failed, "witness: " + made.witness_error.what(), {});
    if (!made.job) return finish_in_flight(p, ProofState::failed, made.job.error().what(), {});
    p.phase = Proof::Phase::running;
    engine.async_submit(
        std::move(*made.job),
        asio::bind_cancellation_slot(
            p.cancel.slot(),
            asio::bind_executor(executor, [self = shared_from_this(), id, run = made.run,
                                           inputs = std::move(made.inputs)](
                                              boost::system::error_code ec,
                                              engine::JobReport report) mutable {
              self->job_done(id, ec, std::move(report), *run, inputs);
            })));
  }

  void job_done(const std::string& id, boost::system::error_code ec, engine::JobReport report,
                const wl::Groth16Run& run, const std::vector<kernels::Fr>& inputs) {
    for (const auto& part : report.parts)
      if (part.device >= 0 && static_cast<std::size_t>(part.device) < device_kernel_ms.size())
        device_kernel_ms[static_cast<std::size_t>(part.device)] += part.kernels.ms;
    auto pit = proofs.find(id);
    if (pit == proofs.end()) return;
    Proof& p = *pit->second;
    if (p.requeue_on_end) return back_to_queue(p);
    std::optional<engine::PartitionReport> part;
    if (!report.parts.empty()) part = report.parts.front();
    if (ec == engine::operation_aborted() || p.cancel_requested)
      return finish_in_flight(p, ProofState::cancelled, "cancelled", part);
    if (ec || run.proved.empty() || !run.proved[0]) {
      std::string why = report.error;
      if (why.empty() && !run.failures.empty()) why = run.failures[0];
      if (why.empty()) why = ec ? ec.message() : "the proof was not made";
      return finish_in_flight(p, ProofState::failed, why, part);
    }
    p.record.proof_json = g16::proof_json(run.proofs[0]);
    p.record.public_json = g16::public_json(inputs);
    finish_in_flight(p, ProofState::done, {}, part);
  }

  void finish_in_flight(Proof& p, ProofState state, const std::string& error,
                        const std::optional<engine::PartitionReport>& part) {
    --in_flight;
    const auto now = Clock::now();
    json t;
    // Waiting in the daemon's queue, then in the engine's: for its share of
    // the budget and a slot before its producer ran, and for a device
    // after it.
    t["queue_wait"] = ms_between(p.accepted, p.started) +
                      (part ? part->producer.start_ms + part->queue_wait_ms : 0.0);
    t["key_load"] = std::max(0.0, ms_between(p.accepted, p.key_ready));
    t["produce"] = p.read_ms + (part ? part->producer.ms : 0.0);
    t["gpu"] = part ? part->kernels.ms : 0.0;
    t["total"] = ms_between(p.accepted, now);
    for (const auto& [stage, v] : t.items()) stage_seconds.observe({stage}, v.get<double>() / 1e3);
    p.record.timings_json = t.dump();
    const std::string id = p.record.id;
    end_proof(id, state, error);
    pump();
    maybe_drained();
  }

  // A proof leaves: the journal records its end, its waiters get it, what it
  // held comes back.
  void end_proof(const std::string& id, ProofState state, const std::string& error) {
    auto pit = proofs.find(id);
    if (pit == proofs.end()) return;
    auto p = std::move(pit->second);
    proofs.erase(pit);
    p->record.state = state;
    p->record.error = state == ProofState::done ? "" : error;
    p->record.finished_at_ms = unix_ms();
    if (p->record.timings_json.empty()) {
      json t{{"queue_wait", 0.0}, {"key_load", 0.0}, {"produce", 0.0}, {"gpu", 0.0},
             {"total", ms_between(p->accepted, Clock::now())}};
      p->record.timings_json = t.dump();
    }
    Error journal_error = journal.finish(p->record);
    proofs_total.add({std::string(to_string(state))});
    if (p->shm_acquired) shm.release(p->record.witness.shm_name);
    // A body's copy was kept only to run the proof again after a restart.
    if (p->record.witness.owned && !journal_error) {
      std::error_code ignored;
      std::filesystem::remove(p->record.witness.path, ignored);
    }
    if (auto k = keys.find(p->record.key); k != keys.end()) {
      Key& key = *k->second;
      if (key.proofs > 0 && --key.proofs == 0 && key.phase == Key::Phase::evicting)
        finish_evict(key.record.name);
    }
    json view = describe(p->record);
    if (journal_error) view["journal_error"] = journal_error.what();
    for (auto& w : p->waiters) {
      w.timer->cancel();
      w.handler(view);
    }
    update_queue_gauges();
  }

  // Drained before it ended: queued again in the journal for the next start.
  void back_to_queue(Proof& p) {
    --in_flight;
    journal.requeue(p.record.id);
    if (p.shm_acquired) shm.release(p.record.witness.shm_name);
    p.shm_acquired = false;
    if (auto k = keys.find(p.record.key); k != keys.end() && k->second->proofs > 0)
      --k->second->proofs;
    const std::string id = p.record.id;
    proofs.erase(id);
    update_queue_gauges();
    maybe_drained();
  }

  void fail_proofs_of(const std::string& key, const std::string& why) {
    std::vector<std::string> ids;
    for (auto it = queue.begin(); it != queue.end();) {
      if (proofs.at(it->second)->record.key == key) {
        ids.push_back(it->second);
        it = queue.erase(it);
      } else {
        ++it;
      }
    }
    for (const auto& id : ids) end_proof(id, ProofState::failed, why);
  }

  json describe(const ProofRecord& r) const {
    json j{{"id", r.id},
           {"key", r.key},
           {"state", to_string(r.state)},
           {"priority", to_string(r.priority)},
           {"attempts", r.attempts}};
    if (!r.idempotency_key.empty()) j["idempotency_key"] = r.idempotency_key;
    j["timings_ms"] = r.timings_json.empty() ? json{{"queue_wait", 0.0},
                                                    {"key_load", 0.0},
                                                    {"produce", 0.0},
                                                    {"gpu", 0.0},
                                                    {"total", 0.0}}
                                              : json::parse(r.timings_json);
    if (r.state == ProofState::done) {
      j["proof"] = json::parse(r.proof_json);
      j["public"] = json::parse(r.public_json);
    }
    if (!r.error.empty()) j["error"] = r.error;
    return j;
  }

  Answer<json> proof_view(const std::string& id) {
    if (auto it = proofs.find(id); it != proofs.end()) {
      const Proof& p = *it->second;
      ProofRecord r = p.record;
      r.state = p.phase == Proof::Phase::queued ? ProofState::queued : ProofState::running;
      json j = describe(r);
      // Every stage's time so far: the GPU's is known when the proof ends.
      const auto now = Clock::now();
      const bool queued = p.phase == Proof::Phase::queued;
      j["timings_ms"] = json{{"queue_wait", ms_between(p.accepted, queued ? now : p.started)},
                             {"key_load", std::max(0.0, ms_between(p.accepted, p.key_ready))},
                             {"produce", p.read_ms},
                             {"gpu", 0.0},
                             {"total", ms_between(p.accepted, now)}};
      return j;
    }
    auto r = journal.proof(id);
    if (!r) return Refusal{500, "journal: " + r.error().what()};
    if (!*r) return Refusal{404, "no proof '" + id + "'"};
    return describe(**r);
  }

  void wait_for(const std::string& id, std::chrono::milliseconds wait, KeyHandler handler) {
    auto it = proofs.find(id);
    if (it == proofs.end() || wait.count() <= 0) return handler(proof_view(id));
    auto timer = std::make_shared<asio::steady_timer>(executor, wait);
    it->second->waiters.push_back({timer, std::move(handler)});
    timer->async_wait([self = shared_from_this(), id, timer](boost::system::error_code ec) {
      if (ec) return;  // the proof ended and answered
      auto it = self->proofs.find(id);
      if (it == self->proofs.end()) return;
      auto& ws = it->second->waiters;
      for (auto w = ws.begin(); w != ws.end(); ++w)
        if (w->timer == timer) {
          auto h = std::move(w->handler);
          ws.erase(w);
          h(self->proof_view(id));
          return;
        }
    });
  }

  Answer<json> cancel(const std::string& id) {
    auto it = proofs.find(id);
    if (it == proofs.end()) {
      auto r = journal.proof(id);
      if (!r) return Refusal{500, "journal: " + r.error().what()};
      if (!*r) return Refusal{404, "no proof '" + id + "'"};
      return Refusal{409, "proof '" + id + "' has ended already (" +
                              std::string(to_string((*r)->state)) + ")"};
    }
    Proof& p = *it->second;
    if (p.phase == Proof::Phase::queued) {
      queue.erase(std::make_pair(-static_cast<int>(p.record.priority), p.seq));
      end_proof(id, ProofState::cancelled, "cancelled before it started");
      return proof_view(id);
    }
    p.cancel_requested = true;
    if (p.phase == Proof::Phase::running) p.cancel.emit(asio::cancellation_type::terminal);
    json j = proof_view(id).value.value_or(json::object());
    j["cancelling"] = true;
    return j;
  }

  // ---- draining ------------------------------------------------------------

  std::function<void()> drained;
  std::shared_ptr<asio::steady_timer> drain_timer;

  void drain(std::chrono::milliseconds timeout, std::function<void()> done) {
    draining = true;
    drained = std::move(done);
    drain_timer = std::make_shared<asio::steady_timer>(executor, timeout);
    drain_timer->async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (ec) return;
      // Still running at the deadline: cancel, and queue again in the journal.
      for (auto& [id, p] : self->proofs)
        if (p->phase != Proof::Phase::queued) {
          p->requeue_on_end = true;
          if (p->phase == Proof::Phase::running) p->cancel.emit(asio::cancellation_type::terminal);
        }
      self->maybe_drained();
    });
    maybe_drained();
  }

  void maybe_drained() {
    if (!draining || !drained || in_flight != 0) return;
    if (drain_timer) drain_timer->cancel();
    auto done = std::move(drained);
    drained = nullptr;
    done();
  }

  // ---- status --------------------------------------------------------------

  void refresh() {
    const auto stats = engine.stats();
    const double up_ms = ms_between(started_at, Clock::now());
    device_busy.clear();
    device_budget_bytes.clear();
    resident_bytes.clear();
    for (std::size_t d = 0; d < device_kernel_ms.size(); ++d) {
      const std::string dev = std::to_string(d);
      device_busy.set({dev}, up_ms > 0 ? std::min(1.0, device_kernel_ms[d] / up_ms) : 0.0);
      if (d < stats.device_budget_limit.size()) {
        device_budget_bytes.set({dev, "limit"}, static_cast<double>(stats.device_budget_limit[d]));
        device_budget_bytes.set({dev, "in_use"}, static_cast<double>(stats.device_budget_in_use[d]));
      }
      for (const auto& [name, k] : keys)
        if (k->phase != Key::Phase::loading)
          resident_bytes.set({name, dev}, static_cast<double>(k->resident.points.bytes()));
    }
    host_budget_bytes.set({"limit"}, static_cast<double>(stats.host_budget_limit));
    host_budget_bytes.set({"in_use"}, static_cast<double>(stats.host_budget_in_use));
    pinned_bytes.set({"in_use"}, static_cast<double>(stats.pinned_bytes_in_use));
    pinned_bytes.set({"pooled"}, static_cast<double>(stats.pinned_bytes_pooled));
    update_queue_gauges();
  }

  json status() const {
    const auto stats = engine.stats();
    const double up_ms = ms_between(started_at, Clock::now());
    json devices = json::array();
    for (std::size_t d = 0; d < engine.devices().size(); ++d) {
      const auto& info = engine.devices()[d].info();
      json j{{"index", d},
             {"name", info.name},
             {"memory_bytes", info.total_memory},
             {"busy_fraction", up_ms > 0 ? std::min(1.0, device_kernel_ms[d] / up_ms) : 0.0}};
      if (d < stats.device_budget_limit.size()) {
        j["budget_bytes"] = stats.device_budget_limit[d];
        j["budget_in_use_bytes"] = stats.device_budget_in_use[d];
        j["resident_bytes"] = stats.device_resident_bytes[d];
        j["healthy"] = static_cast<bool>(stats.device_healthy[d]);
      }
      devices.push_back(std::move(j));
    }
    json queued = json::object();
    for (auto p : {Priority::critical, Priority::high, Priority::normal, Priority::low})
      queued[std::string(to_string(p))] = 0;
    for (const auto& [rank, id] : queue)
      queued[std::string(to_string(proofs.at(id)->record.priority))] =
          queued[std::string(to_string(proofs.at(id)->record.priority))].get<int>() + 1;
    json keys_json = json::array();
    for (const auto& [name, k] : keys) keys_json.push_back(describe(*k));
    return json{{"state", draining ? "draining" : "serving"},
                {"uptime_s", up_ms / 1e3},
                {"backend", engine.devices().backend() == devices::Backend::cuda ? "cuda" : "host"},
                {"devices", std::move(devices)},
                {"queue", {{"queued", std::move(queued)}, {"running", in_flight},
                           {"max_in_flight", max_in_flight()}}},
                {"keys", std::move(keys_json)},
                {"shm_regions", shm.regions().size()},
                {"host", {{"budget_bytes", stats.host_budget_limit},
                          {"budget_in_use_bytes", stats.host_budget_in_use},
                          {"pinned_in_use_bytes", stats.pinned_bytes_in_use},
                          {"pinned_pooled_bytes", stats.pinned_bytes_pooled}}},
                {"engine", {{"jobs_in_flight", stats.jobs_in_flight},
                            {"partitions_in_flight", stats.partitions_in_flight},
                            {"idle", stats.idle()}}}};
  }
};

// ---- ProofService ----------------------------------------------------------

ProofService::ProofService(asio::any_io_executor executor, engine::Engine& engine, Journal& journal,
                           Metrics& metrics, ServiceOptions options)
    : state_(std::make_shared<State>(std::move(executor), engine, journal, metrics,
                                     std::move(options))) {}

ProofService::~ProofService() {
  state_->close();
}

Error ProofService::recover() {
  auto& s = *state_;
  auto keys = s.journal.keys();
  if (!keys) return keys.error();
  auto unfinished = s.journal.unfinished();
  if (!unfinished) return unfinished.error();
  // Proofs first, so that they count against their keys while those load.
  for (auto& r : *unfinished) {
    if (r.state == ProofState::running) {
      if (Error e = s.journal.requeue(r.id)) return e;
      r.state = ProofState::queued;
    }
    s.enqueue(r, std::nullopt, false);
  }
  // A key whose file went away fails its load and the proofs that need it,
  // and is dropped from the journal; one whose load a shutdown cut short
  // stays there for the next start.
  s.keys_to_recover = keys->size();
  for (const auto& k : *keys) {
    // Keys load one after another on the workers; a restart with many keys
    // is bounded by the disks either way.
    s.load_key(k.name, k.path, k.format,
               [st = state_, name = k.name](Answer<json> a) {
                 if (!a && !st->draining && !st->closed) st->journal.remove_key(name);
                 if (st->keys_to_recover > 0) --st->keys_to_recover;
               },
               true);
  }
  for (auto& [id, p] : s.proofs)
    if (auto k = s.keys.find(p->record.key); k != s.keys.end()) ++k->second->proofs;
  for (auto it = s.queue.begin(); it != s.queue.end();) {
    if (!s.keys.count(s.proofs.at(it->second)->record.key)) {
      const std::string id = it->second;
      const std::string key = s.proofs.at(id)->record.key;
      it = s.queue.erase(it);
      s.end_proof(id, ProofState::failed, "key '" + key + "' is not loaded after the restart");
    } else {
      ++it;
    }
  }
  s.pump();
  return {};
}

void ProofService::load_key(const std::string& name, const std::string& path,
                            const std::string& format, KeyHandler handler) {
  state_->load_key(name, path, format, std::move(handler));
}

json ProofService::keys() const {
  json out = json::array();
  for (const auto& [name, k] : state_->keys) out.push_back(state_->describe(*k));
  return json{{"keys", std::move(out)}};
}

void ProofService::evict_key(const std::string& name, KeyHandler handler) {
  state_->evict_key(name, std::move(handler));
}

Answer<Submitted> ProofService::submit(ProofRequest request, const std::optional<uid_t>& caller) {
  return state_->submit(std::move(request), caller);
}

Answer<json> ProofService::proof(const std::string& id) { return state_->proof_view(id); }

void ProofService::wait_for(const std::string& id, std::chrono::milliseconds wait,
                            KeyHandler handler) {
  state_->wait_for(id, wait, std::move(handler));
}

Answer<json> ProofService::cancel(const std::string& id) { return state_->cancel(id); }

Answer<json> ProofService::register_shm(const std::string& name, std::uint64_t bytes,
                                        const std::optional<uid_t>& caller) {
  if (state_->draining) return Refusal{503, "the daemon is draining"};
  auto r = state_->shm.add(name, bytes, caller);
  if (!r) return r.refusal;
  return json{{"name", name}, {"bytes", (*r.value)->bytes}};
}

Answer<json> ProofService::unregister_shm(const std::string& name,
                                          const std::optional<uid_t>& caller) {
  auto r = state_->shm.remove(name, caller);
  if (!r) return r.refusal;
  return json{{"name", name}, {"unregistered", true}};
}

json ProofService::status() const { return state_->status(); }
void ProofService::refresh_gauges() { state_->refresh(); }

bool ProofService::ready() const noexcept {
  if (state_->draining) return false;
  for (const auto& [name, k] : state_->keys)
    if (k->phase == State::Key::Phase::loading) return false;
  return true;
}

bool ProofService::draining() const noexcept { return state_->draining; }

void ProofService::drain(std::chrono::milliseconds timeout, std::function<void()> done) {
  state_->drain(timeout, std::move(done));
}

}  // namespace stoker::serve
