#include "tools/serve/sqlite_journal.hpp"

#include <sqlite3.h>

#include <array>
#include <filesystem>
#include <system_error>
#include <utility>

namespace stoker::serve {
namespace {

namespace fs = std::filesystem;

// How long a write waits for another connection's (another process's)
// transaction before it fails: long enough to ride out a checkpoint, short
// enough that a wedged peer shows up as an error rather than a hang.
constexpr int kBusyTimeoutMs = 5000;

// Schema 1. `seq` is the order accept() recorded a proof in: unfinished()
// and purge list by it. Without AUTOINCREMENT SQLite may give a purged
// proof's seq to a new one, but only above every seq still present, so the
// order of the records that remain is kept. Times are Unix milliseconds,
// 0 for "not yet"; the shm offset and size are unsigned 64-bit values
// stored in SQLite's signed integers bit for bit. An idempotency key is
// unique among the records that have one.
static_assert(SqliteJournal::kSchemaVersion == 1, "the schema below is version 1");
constexpr const char* kSchema = R"sql(
CREATE TABLE keys (
  name TEXT PRIMARY KEY NOT NULL,
  path TEXT NOT NULL,
  format TEXT NOT NULL,
  loaded_at_ms INTEGER NOT NULL
);
CREATE TABLE proofs (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  key TEXT NOT NULL,
  witness_kind TEXT NOT NULL CHECK (witness_kind IN ('file', 'shm')),
  witness_path TEXT NOT NULL,
  witness_owned INTEGER NOT NULL CHECK (witness_owned IN (0, 1)),
  shm_name TEXT NOT NULL,
  shm_offset INTEGER NOT NULL,
  shm_bytes INTEGER NOT NULL,
  priority INTEGER NOT NULL CHECK (priority BETWEEN 0 AND 3),
  idempotency_key TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
  accepted_at_ms INTEGER NOT NULL,
  started_at_ms INTEGER NOT NULL,
  finished_at_ms INTEGER NOT NULL,
  attempts INTEGER NOT NULL,
  proof_json TEXT NOT NULL,
  public_json TEXT NOT NULL,
  error TEXT NOT NULL,
  timings_json TEXT NOT NULL,
  shm_owner_uid INTEGER NOT NULL
);
CREATE UNIQUE INDEX proofs_by_idempotency_key ON proofs (idempotency_key)
  WHERE idempotency_key <> '';
CREATE INDEX proofs_unfinished ON proofs (seq) WHERE state IN ('queued', 'running');
CREATE INDEX proofs_finished ON proofs (finished_at_ms)
  WHERE state IN ('done', 'failed', 'cancelled');
PRAGMA user_version = 1;
)sql";

// The columns of a ProofRecord, in the order read_proof() and bind_proof()
// take them. Statements join only constant text like this; values are
// always bound parameters.
constexpr const char* kProofColumns =
    "id, key, witness_kind, witness_path, witness_owned, shm_name, shm_offset, shm_bytes, "
    "priority, idempotency_key, state, accepted_at_ms, started_at_ms, finished_at_ms, attempts, "
    "proof_json, public_json, error, timings_json, shm_owner_uid";

std::string select_proofs(const char* rest) {
  return std::string("SELECT ") + kProofColumns + " FROM proofs " + rest;
}

// SQLite's words for a failure: the connection's message where its last
// error is this one, else the code's own text (a failed bind does not set
// the connection's message).
std::string sqlite_words(sqlite3* db, int rc) {
  if (db != nullptr && sqlite3_extended_errcode(db) == rc) return sqlite3_errmsg(db);
  return sqlite3_errstr(rc);
}

std::string in_quotes(std::string_view s) {
  return "'" + std::string(s) + "'";
}

// An open connection; sqlite3_close_v2 waits for statements still alive.
struct Database {
  sqlite3* handle = nullptr;
  Database() = default;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database() { sqlite3_close_v2(handle); }
};

// A prepared statement, finalized on destruction.
class Statement {
 public:
  Statement() = default;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement() { sqlite3_finalize(s_); }
  sqlite3_stmt* get() const noexcept { return s_; }
  sqlite3_stmt** out() noexcept { return &s_; }

 private:
  sqlite3_stmt* s_ = nullptr;
};

// One run of a prepared statement: binds its parameters in order (?1, ?2,
// ...), steps it, and on every path resets it and clears its bindings, so
// that the next run starts clean and no read stays open.
class Run {
 public:
  explicit Run(const Statement& s) : s_(s.get()) {}
  ~Run() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  Run& text(std::string_view v) {
    // An empty view may have no data pointer, which SQLite would bind as
    // NULL; the columns hold '' instead.
    if (rc_ == SQLITE_OK)
      rc_ = sqlite3_bind_text64(s_, ++next_, v.empty() ? "" : v.data(), v.size(), SQLITE_TRANSIENT,
                                SQLITE_UTF8);
    return *this;
  }
  Run& integer(std::int64_t v) {
    if (rc_ == SQLITE_OK) rc_ = sqlite3_bind_int64(s_, ++next_, v);
    return *this;
  }
  // SQLITE_ROW, SQLITE_DONE, or the failure (a failed bind's first).
  int step() { return rc_ != SQLITE_OK ? rc_ : sqlite3_step(s_); }
  sqlite3_stmt* get() const noexcept { return s_; }

 private:
  sqlite3_stmt* s_;
  int next_ = 0;
  int rc_ = SQLITE_OK;
};

std::string column_text(sqlite3_stmt* s, int i) {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, i));
  return p != nullptr ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(s, i)))
                      : std::string();
}

std::string_view witness_kind_name(WitnessSource::Kind k) {
  return k == WitnessSource::Kind::shm ? "shm" : "file";
}

// Binds a record's kProofColumns in their order.
void bind_proof(Run& run, const ProofRecord& p) {
  run.text(p.id)
      .text(p.key)
      .text(witness_kind_name(p.witness.kind))
      .text(p.witness.path)
      .integer(p.witness.owned ? 1 : 0)
      .text(p.witness.shm_name)
      .integer(static_cast<std::int64_t>(p.witness.offset))
      .integer(static_cast<std::int64_t>(p.witness.bytes))
      .integer(static_cast<std::int64_t>(p.priority))
      .text(p.idempotency_key)
      .text(to_string(p.state))
      .integer(p.accepted_at_ms)
      .integer(p.started_at_ms)
      .integer(p.finished_at_ms)
      .integer(static_cast<std::int64_t>(p.attempts))
      .text(p.proof_json)
      .text(p.public_json)
      .text(p.error)
      .text(p.timings_json)
      .integer(p.witness.owner_uid);
}

}  // namespace

struct SqliteJournal::Connection {
  std::string path;
  Database db;  // declared first: closed after every statement is finalized
  Statement begin, commit, rollback;
  Statement put_key, remove_key, keys;
  Statement proof_by_id, proof_by_idempotency_key, insert_proof;
  Statement mark_running, finish, requeue;
  Statement unfinished, counts, purge_select, purge_delete;

  sqlite3* handle() const noexcept { return db.handle; }

  Error fail(std::string_view what, int rc) const {
    return Error(Errc::io_error,
                 "journal " + path + ": " + std::string(what) + ": " + sqlite_words(handle(), rc));
  }

  Error prepare(Statement& s, const std::string& sql) {
    const int rc = sqlite3_prepare_v3(handle(), sql.c_str(), static_cast<int>(sql.size() + 1),
                                      SQLITE_PREPARE_PERSISTENT, s.out(), nullptr);
    return rc == SQLITE_OK ? Error{} : fail("preparing '" + sql + "'", rc);
  }

  // A statement without parameters whose rows (if any) are not needed.
  Error exec(std::string_view what, const char* sql) {
    const int rc = sqlite3_exec(handle(), sql, nullptr, nullptr, nullptr);
    return rc == SQLITE_OK ? Error{} : fail(what, rc);
  }

  // The one integer a PRAGMA query returns.
  Result<std::int64_t> pragma_integer(std::string_view what, const char* sql) {
    Statement s;
    if (Error e = prepare(s, sql)) return e;
    Run run(s);
    const int rc = run.step();
    if (rc != SQLITE_ROW) return fail(what, rc);
    return sqlite3_column_int64(s.get(), 0);
  }

  Result<ProofRecord> read_proof(sqlite3_stmt* s) const {
    ProofRecord p;
    p.id = column_text(s, 0);
    p.key = column_text(s, 1);
    const std::string kind = column_text(s, 2);
    p.witness.path = column_text(s, 3);
    p.witness.owned = sqlite3_column_int64(s, 4) != 0;
    p.witness.shm_name = column_text(s, 5);
    p.witness.offset = static_cast<std::uint64_t>(sqlite3_column_int64(s, 6));
    p.witness.bytes = static_cast<std::uint64_t>(sqlite3_column_int64(s, 7));
    const std::int64_t priority = sqlite3_column_int64(s, 8);
    p.idempotency_key = column_text(s, 9);
    const std::string state = column_text(s, 10);
    p.accepted_at_ms = sqlite3_column_int64(s, 11);
    p.started_at_ms = sqlite3_column_int64(s, 12);
    p.finished_at_ms = sqlite3_column_int64(s, 13);
    p.attempts = static_cast<unsigned>(sqlite3_column_int64(s, 14));
    p.proof_json = column_text(s, 15);
    p.public_json = column_text(s, 16);
    p.error = column_text(s, 17);
    p.timings_json = column_text(s, 18);
    p.witness.owner_uid = sqlite3_column_int64(s, 19);
    // The schema's CHECKs hold these; a file edited by hand may not.
    const auto parsed = proof_state_from(state);
    if (kind != "file" && kind != "shm")
      return Error(Errc::io_error, "journal " + path + ": proof " + in_quotes(p.id) +
                                       " has an unknown witness kind " + in_quotes(kind));
    if (!parsed)
      return Error(Errc::io_error, "journal " + path + ": proof " + in_quotes(p.id) +
                                       " has an unknown state " + in_quotes(state));
    if (priority < 0 || priority > static_cast<std::int64_t>(Priority::critical))
      return Error(Errc::io_error, "journal " + path + ": proof " + in_quotes(p.id) +
                                       " has an unknown priority " + std::to_string(priority));
    p.witness.kind = kind == "shm" ? WitnessSource::Kind::shm : WitnessSource::Kind::file;
    p.state = *parsed;
    p.priority = static_cast<Priority>(priority);
    return p;
  }

  // Runs `s` (its parameters bound by `bind`) and reads every row.
  template <typename Bind>
  Result<std::vector<ProofRecord>> read_proofs(const Statement& s, std::string_view what,
                                               Bind&& bind) {
    Run run(s);
    bind(run);
    std::vector<ProofRecord> out;
    for (;;) {
      const int rc = run.step();
      if (rc == SQLITE_DONE) return out;
      if (rc != SQLITE_ROW) return fail(what, rc);
      auto p = read_proof(run.get());
      if (!p) return std::move(p).error();
      out.push_back(std::move(*p));
    }
  }

  Result<std::optional<ProofRecord>> find_proof(const Statement& s, std::string_view value,
                                                std::string_view what) {
    auto rows = read_proofs(s, what, [&](Run& run) { run.text(value); });
    if (!rows) return std::move(rows).error();
    if (rows->empty()) return std::optional<ProofRecord>();
    return std::optional<ProofRecord>(std::move(rows->front()));
  }

  // Why a move of proof `id` changed no row: there is no such proof, or
  // it has already ended.
  Error refusal(std::string_view id, std::string_view move) {
    auto p = find_proof(proof_by_id, id, "looking up proof " + in_quotes(id));
    if (!p) return std::move(p).error();
    if (!*p)
      return Error(Errc::invalid_argument, "cannot " + std::string(move) + " proof " +
                                               in_quotes(id) + ": journal " + path +
                                               " has no proof of that id");
    return Error(Errc::invalid_argument, "cannot " + std::string(move) + " proof " + in_quotes(id) +
                                             ": it has already ended (" +
                                             std::string(to_string((*p)->state)) + ")");
  }

  // A move of one proof by id changed its row, or says why not.
  Error one_row_moved(std::string_view id, std::string_view move) {
    return sqlite3_changes(handle()) == 1 ? Error{} : refusal(id, move);
  }

  // A write transaction (BEGIN IMMEDIATE: the write lock is taken at the
  // start, so two connections never both read "no such record" and then
  // both insert). Rolled back on destruction unless committed.
  class Transaction {
   public:
    explicit Transaction(Connection& c) : c_(c) {}
    ~Transaction() {
      if (open_ && sqlite3_get_autocommit(c_.handle()) == 0) Run(c_.rollback).step();
    }
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;

    Error begin() {
      const int rc = Run(c_.begin).step();
      if (rc != SQLITE_DONE) return c_.fail("starting a transaction", rc);
      open_ = true;
      return {};
    }
    Error commit() {
      const int rc = Run(c_.commit).step();
      if (rc != SQLITE_DONE) return c_.fail("committing a transaction", rc);
      open_ = false;
      return {};
    }

   private:
    Connection& c_;
    bool open_ = false;
  };
};

SqliteJournal::SqliteJournal(std::unique_ptr<Connection> connection) : c_(std::move(connection)) {}
SqliteJournal::~SqliteJournal() = default;

const std::string& SqliteJournal::path() const noexcept {
  return c_->path;
}

Result<std::unique_ptr<SqliteJournal>> SqliteJournal::open(const std::string& directory) {
  std::error_code ec;
  const fs::file_status status = fs::status(directory, ec);
  if (!fs::is_directory(status)) {
    const std::string why = fs::exists(status)                                ? "is not a directory"
                            : ec && status.type() != fs::file_type::not_found ? ec.message()
                                                                              : "does not exist";
    return Error(Errc::io_error, "journal directory " + directory + " " + why);
  }

  auto c = std::make_unique<Connection>();
  c->path = (fs::path(directory) / kFileName).string();
  // NOMUTEX: mutex_ already serializes every use of this connection.
  const int rc =
      sqlite3_open_v2(c->path.c_str(), &c->db.handle,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) return c->fail("opening", rc);
  sqlite3_extended_result_codes(c->handle(), 1);
  sqlite3_busy_timeout(c->handle(), kBusyTimeoutMs);

  // The first statement that reads the file: one that is not a database
  // fails here.
  {
    Statement s;
    if (Error e = c->prepare(s, "PRAGMA journal_mode = WAL")) return e;
    Run run(s);
    const int step = run.step();
    if (step != SQLITE_ROW) return c->fail("switching to WAL mode", step);
    const std::string mode = column_text(s.get(), 0);
    if (mode != "wal")
      return Error(Errc::io_error,
                   "journal " + c->path + ": SQLite kept journal mode " + mode + " instead of wal");
  }
  // In WAL mode FULL syncs the WAL at every commit: a commit that returned
  // survives a power cut, which NORMAL does not promise.
  if (Error e = c->exec("setting synchronous = FULL", "PRAGMA synchronous = FULL")) return e;

  auto version = c->pragma_integer("reading the schema version", "PRAGMA user_version");
  if (!version) return std::move(version).error();
  if (*version > kSchemaVersion)
    return Error(Errc::io_error, "journal " + c->path + " has schema version " +
                                     std::to_string(*version) + ", newer than the version " +
                                     std::to_string(kSchemaVersion) +
                                     " this stoker reads: run the stoker that wrote it, or move "
                                     "the file (with its -wal and -shm files) away");
  if (*version < kSchemaVersion) {
    // Another process may be creating the same file: take the write lock,
    // then look again.
    if (Error e = c->exec("starting the schema's transaction", "BEGIN IMMEDIATE")) return e;
    auto again = c->pragma_integer("reading the schema version", "PRAGMA user_version");
    Error e = again ? Error{} : std::move(again).error();
    if (!e && *again == 0) e = c->exec("creating the tables", kSchema);
    if (!e && *again != 0 && *again != kSchemaVersion)
      e = Error(Errc::io_error, "journal " + c->path + " has schema version " +
                                    std::to_string(*again) + " while it was opened");
    if (!e) e = c->exec("committing the tables", "COMMIT");
    if (e) {
      if (sqlite3_get_autocommit(c->handle()) == 0)
        sqlite3_exec(c->handle(), "ROLLBACK", nullptr, nullptr, nullptr);
      return e;
    }
  }

  const std::pair<Statement Connection::*, std::string> statements[] = {
      {&Connection::begin, "BEGIN IMMEDIATE"},
      {&Connection::commit, "COMMIT"},
      {&Connection::rollback, "ROLLBACK"},
      {&Connection::put_key,
       "INSERT INTO keys (name, path, format, loaded_at_ms) VALUES (?1, ?2, ?3, ?4) "
       "ON CONFLICT (name) DO UPDATE SET path = excluded.path, format = excluded.format, "
       "loaded_at_ms = excluded.loaded_at_ms"},
      {&Connection::remove_key, "DELETE FROM keys WHERE name = ?1"},
      {&Connection::keys, "SELECT name, path, format, loaded_at_ms FROM keys ORDER BY name"},
      {&Connection::proof_by_id, select_proofs("WHERE id = ?1")},
      // The second condition lets SQLite use the partial unique index.
      {&Connection::proof_by_idempotency_key,
       select_proofs("WHERE idempotency_key = ?1 AND idempotency_key <> ''")},
      {&Connection::insert_proof,
       std::string("INSERT INTO proofs (") + kProofColumns +
           ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
           "?18, ?19, ?20)"},
      {&Connection::mark_running,
       "UPDATE proofs SET state = 'running', started_at_ms = ?2, attempts = attempts + 1 "
       "WHERE id = ?1 AND state IN ('queued', 'running')"},
      {&Connection::finish,
       "UPDATE proofs SET state = ?2, finished_at_ms = ?3, proof_json = ?4, public_json = ?5, "
       "error = ?6, timings_json = ?7 WHERE id = ?1 AND state IN ('queued', 'running')"},
      {&Connection::requeue,
       "UPDATE proofs SET state = 'queued', started_at_ms = 0 "
       "WHERE id = ?1 AND state IN ('queued', 'running')"},
      {&Connection::unfinished, select_proofs("WHERE state IN ('queued', 'running') ORDER BY seq")},
      {&Connection::counts, "SELECT state, COUNT(*) FROM proofs GROUP BY state"},
      {&Connection::purge_select,
       select_proofs("WHERE state IN ('done', 'failed', 'cancelled') AND finished_at_ms < ?1 "
                     "ORDER BY seq")},
      {&Connection::purge_delete,
       "DELETE FROM proofs WHERE state IN ('done', 'failed', 'cancelled') AND finished_at_ms < ?1"},
  };
  for (const auto& [member, sql] : statements)
    if (Error e = c->prepare((*c).*member, sql)) return e;

  return std::unique_ptr<SqliteJournal>(new SqliteJournal(std::move(c)));
}

Error SqliteJournal::put_key(const KeyRecord& key) {
  if (key.name.empty()) return Error(Errc::invalid_argument, "a key needs a name");
  std::lock_guard lock(mutex_);
  {
    Run run(c_->put_key);
    const int rc =
        run.text(key.name).text(key.path).text(key.format).integer(key.loaded_at_ms).step();
    if (rc != SQLITE_DONE) return c_->fail("recording key " + in_quotes(key.name), rc);
  }
  return {};
}

Error SqliteJournal::remove_key(std::string_view name) {
  std::lock_guard lock(mutex_);
  Run run(c_->remove_key);
  const int rc = run.text(name).step();
  return rc == SQLITE_DONE ? Error{} : c_->fail("removing key " + in_quotes(name), rc);
}

Result<std::vector<KeyRecord>> SqliteJournal::keys() {
  std::lock_guard lock(mutex_);
  Run run(c_->keys);
  std::vector<KeyRecord> out;
  for (;;) {
    const int rc = run.step();
    if (rc == SQLITE_DONE) return out;
    if (rc != SQLITE_ROW) return c_->fail("listing keys", rc);
    sqlite3_stmt* s = run.get();
    out.push_back(KeyRecord{column_text(s, 0), column_text(s, 1), column_text(s, 2),
                            sqlite3_column_int64(s, 3)});
  }
}

Result<Journal::Accepted> SqliteJournal::accept(const ProofRecord& proof) {
  if (proof.id.empty()) return Error(Errc::invalid_argument, "a proof needs an id");
  // What accept() records of the request: none of the later stages' fields.
  ProofRecord stored;
  stored.id = proof.id;
  stored.key = proof.key;
  stored.witness = proof.witness;
  stored.priority = proof.priority;
  stored.idempotency_key = proof.idempotency_key;
  stored.accepted_at_ms = proof.accepted_at_ms;

  std::lock_guard lock(mutex_);
  Connection& c = *c_;
  Connection::Transaction tx(c);
  if (Error e = tx.begin()) return e;
  if (!stored.idempotency_key.empty()) {
    auto earlier = c.find_proof(c.proof_by_idempotency_key, stored.idempotency_key,
                                "looking up idempotency key " + in_quotes(stored.idempotency_key));
    if (!earlier) return std::move(earlier).error();
    if (*earlier) {
      if (Error e = tx.commit()) return e;
      return Accepted{std::move(**earlier), false};
    }
  }
  auto same_id = c.find_proof(c.proof_by_id, stored.id, "looking up proof " + in_quotes(stored.id));
  if (!same_id) return std::move(same_id).error();
  if (*same_id)
    return Error(Errc::invalid_argument,
                 "proof id " + in_quotes(stored.id) + " is already recorded in journal " + c.path);
  {
    Run run(c.insert_proof);
    bind_proof(run, stored);
    const int rc = run.step();
    if (rc != SQLITE_DONE) return c.fail("recording proof " + in_quotes(stored.id), rc);
  }
  if (Error e = tx.commit()) return e;
  return Accepted{std::move(stored), true};
}

namespace {

// Runs `write` with synchronous = NORMAL: its commit reaches the WAL
// without an fsync of its own, survives the process's death (kill -9
// included), and becomes durable with the next synced commit or
// checkpoint. For the writes a power cut may lose without breaking a
// promise (below); each fsync sat in a proof's latency on the executor.
template <typename Connection, typename Write>
Error relaxed(Connection& c, Write&& write) {
  if (Error e = c.exec("relaxing synchronous", "PRAGMA synchronous = NORMAL")) return e;
  Error written = write();
  if (Error e = c.exec("setting synchronous = FULL", "PRAGMA synchronous = FULL")) return e;
  return written;
}

}  // namespace

Error SqliteJournal::mark_running(std::string_view id, std::int64_t at_ms) {
  std::lock_guard lock(mutex_);
  // A start lost to a power cut leaves the proof queued, which a restart
  // runs again as it would a running one.
  return relaxed(*c_, [&]() -> Error {
    {
      Run run(c_->mark_running);
      const int rc = run.text(id).integer(at_ms).step();
      if (rc != SQLITE_DONE) return c_->fail("starting proof " + in_quotes(id), rc);
    }
    return c_->one_row_moved(id, "start");
  });
}

Error SqliteJournal::finish(const ProofRecord& proof) {
  if (!finished(proof.state))
    return Error(Errc::invalid_argument, "cannot finish proof " + in_quotes(proof.id) + " as " +
                                             std::string(to_string(proof.state)) +
                                             ": a proof ends done, failed or cancelled");
  std::lock_guard lock(mutex_);
  const auto write = [&]() -> Error {
    {
      Run run(c_->finish);
      const int rc = run.text(proof.id)
                         .text(to_string(proof.state))
                         .integer(proof.finished_at_ms)
                         .text(proof.proof_json)
                         .text(proof.public_json)
                         .text(proof.error)
                         .text(proof.timings_json)
                         .step();
      if (rc != SQLITE_DONE) return c_->fail("finishing proof " + in_quotes(proof.id), rc);
    }
    return c_->one_row_moved(proof.id, "finish");
  };
  // A proof done or failed that a power cut loses runs again after the
  // restart, to the same outcome (a done one with new randomness, valid as
  // the first). A cancellation is synced: a cancelled proof must not run
  // again.
  if (proof.state == ProofState::cancelled) return write();
  return relaxed(*c_, write);
}

Error SqliteJournal::requeue(std::string_view id) {
  std::lock_guard lock(mutex_);
  {
    Run run(c_->requeue);
    const int rc = run.text(id).step();
    if (rc != SQLITE_DONE) return c_->fail("requeueing proof " + in_quotes(id), rc);
  }
  return c_->one_row_moved(id, "requeue");
}

Result<std::optional<ProofRecord>> SqliteJournal::proof(std::string_view id) {
  std::lock_guard lock(mutex_);
  return c_->find_proof(c_->proof_by_id, id, "reading proof " + in_quotes(id));
}

Result<std::optional<ProofRecord>> SqliteJournal::proof_by_idempotency_key(std::string_view key) {
  if (key.empty()) return std::optional<ProofRecord>{};
  std::lock_guard lock(mutex_);
  return c_->find_proof(c_->proof_by_idempotency_key, key,
                        "looking up idempotency key " + in_quotes(key));
}

Result<std::vector<ProofRecord>> SqliteJournal::unfinished() {
  std::lock_guard lock(mutex_);
  return c_->read_proofs(c_->unfinished, "listing unfinished proofs", [](Run&) {});
}

Result<std::vector<std::pair<ProofState, std::size_t>>> SqliteJournal::counts() {
  std::array<std::size_t, 5> by_state{};
  {
    std::lock_guard lock(mutex_);
    Run run(c_->counts);
    for (;;) {
      const int rc = run.step();
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return c_->fail("counting proofs", rc);
      const std::string state = column_text(run.get(), 0);
      const auto parsed = proof_state_from(state);
      if (!parsed)
        return Error(Errc::io_error, "journal " + c_->path + " holds proofs in an unknown state " +
                                         in_quotes(state));
      by_state[static_cast<std::size_t>(*parsed)] =
          static_cast<std::size_t>(sqlite3_column_int64(run.get(), 1));
    }
  }
  std::vector<std::pair<ProofState, std::size_t>> out;
  for (std::size_t i = 0; i < by_state.size(); ++i)
    out.emplace_back(static_cast<ProofState>(i), by_state[i]);
  return out;
}

Result<std::vector<ProofRecord>> SqliteJournal::purge_finished_before(std::int64_t before_ms) {
  std::lock_guard lock(mutex_);
  Connection& c = *c_;
  Connection::Transaction tx(c);
  if (Error e = tx.begin()) return e;
  auto gone = c.read_proofs(c.purge_select, "listing finished proofs to purge",
                            [&](Run& run) { run.integer(before_ms); });
  if (!gone) return gone;
  {
    Run run(c.purge_delete);
    const int rc = run.integer(before_ms).step();
    if (rc != SQLITE_DONE) return c.fail("purging finished proofs", rc);
  }
  if (Error e = tx.commit()) return e;
  return gone;
}

}  // namespace stoker::serve
