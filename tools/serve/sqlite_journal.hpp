// SqliteJournal: the embedded Journal, one SQLite database file
// (<state directory>/journal.sqlite3) beside the daemon.
//
// Promises:
// - Durability: the database runs in WAL mode with synchronous=FULL, so a
//   member that writes has its change (and the WAL sync) on stable storage
//   when it returns; a process killed at any point leaves every write that
//   returned, and none half-made (each write is one SQLite transaction).
// - Thread safety: every member may be called from any thread; one mutex
//   guards the connection, so calls run one at a time. Another process (or
//   a second SqliteJournal on the same directory) may share the file:
//   SQLite's locks order the writers, and a writer waits up to the busy
//   timeout for another before failing.
// - Failure: SQLite's failures are Errc::io_error with a message that names
//   the file, what was being done, and SQLite's own words. A file that is
//   not a database, or one written by a newer stoker (its schema version,
//   PRAGMA user_version, above this one's), is refused at open.
// - Lifetime: destroying the object closes the connection; the WAL is
//   folded into the database file then, or by the next open after a crash.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "tools/serve/journal.hpp"

namespace stoker::serve {

class SqliteJournal final : public Journal {
 public:
  // The file's name in the state directory.
  static constexpr std::string_view kFileName = "journal.sqlite3";
  // The schema this build writes; open() creates it in an empty file.
  static constexpr int kSchemaVersion = 1;

  // Opens <directory>/journal.sqlite3, creating it (and its tables) if it
  // is not there. The directory must exist.
  static Result<std::unique_ptr<SqliteJournal>> open(const std::string& directory);

  ~SqliteJournal() override;
  SqliteJournal(const SqliteJournal&) = delete;
  SqliteJournal& operator=(const SqliteJournal&) = delete;

  // The database file's path, as errors name it.
  const std::string& path() const noexcept;

  Error put_key(const KeyRecord& key) override;
  Error remove_key(std::string_view name) override;
  Result<std::vector<KeyRecord>> keys() override;

  Result<Accepted> accept(const ProofRecord& proof) override;
  Error mark_running(std::string_view id, std::int64_t at_ms) override;
  Error finish(const ProofRecord& proof) override;
  Error requeue(std::string_view id) override;

  Result<std::optional<ProofRecord>> proof(std::string_view id) override;
  Result<std::optional<ProofRecord>> proof_by_idempotency_key(std::string_view key) override;
  Result<std::vector<ProofRecord>> unfinished() override;
  Result<std::vector<std::pair<ProofState, std::size_t>>> counts() override;
  Result<std::vector<ProofRecord>> purge_finished_before(std::int64_t before_ms) override;

 private:
  // The sqlite3 handle and its prepared statements (sqlite_journal.cpp),
  // kept out of this header so that its users do not include sqlite3.h.
  struct Connection;
  explicit SqliteJournal(std::unique_ptr<Connection> connection);

  std::mutex mutex_;
  std::unique_ptr<Connection> c_;  // guarded by mutex_
};

}  // namespace stoker::serve
