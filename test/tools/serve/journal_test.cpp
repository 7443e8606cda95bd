// SqliteJournal, what `stoker serve` keeps across a restart: the keys it
// holds and every proof it accepted, each proof accepted once per
// idempotency key, its state moves, and that a write is in the file once
// the call returns, even when the process is killed right after.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <latch>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tools/serve/sqlite_journal.hpp"

namespace stoker::serve {
namespace {

namespace fs = std::filesystem;

class SqliteJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("stoker_journal_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The journal of this test's directory, or null (with the failure
  // reported) when it does not open.
  std::unique_ptr<SqliteJournal> open() {
    auto j = SqliteJournal::open(dir_.string());
    if (!j) {
      ADD_FAILURE() << j.error().what();
      return nullptr;
    }
    return std::move(*j);
  }
  std::string file() const { return (dir_ / "journal.sqlite3").string(); }

  fs::path dir_;
};

ProofRecord request(const std::string& id, const std::string& idempotency_key = "",
                    std::int64_t accepted_at_ms = 1'700'000'000'000) {
  ProofRecord p;
  p.id = id;
  p.key = "multiplier";
  p.witness.kind = WitnessSource::Kind::file;
  p.witness.path = "/var/lib/stoker/witness/" + id + ".wtns";
  p.witness.owned = true;
  p.priority = Priority::high;
  p.idempotency_key = idempotency_key;
  p.accepted_at_ms = accepted_at_ms;
  return p;
}

// Every field, so that a comparison that fails shows which one differs.
std::string describe(const ProofRecord& p) {
  std::ostringstream s;
  s << "id=" << p.id << " key=" << p.key
    << " witness.kind=" << (p.witness.kind == WitnessSource::Kind::shm ? "shm" : "file")
    << " witness.path=" << p.witness.path << " witness.owned=" << p.witness.owned
    << " witness.shm_name=" << p.witness.shm_name << " witness.offset=" << p.witness.offset
    << " witness.bytes=" << p.witness.bytes << " witness.owner_uid=" << p.witness.owner_uid
    << " priority=" << to_string(p.priority)
    << " idempotency_key=" << p.idempotency_key << " state=" << to_string(p.state)
    << " accepted_at_ms=" << p.accepted_at_ms << " started_at_ms=" << p.started_at_ms
    << " finished_at_ms=" << p.finished_at_ms << " attempts=" << p.attempts
    << " proof_json=" << p.proof_json << " public_json=" << p.public_json << " error=" << p.error
    << " timings_json=" << p.timings_json;
  return s.str();
}

std::vector<std::string> ids(const std::vector<ProofRecord>& records) {
  std::vector<std::string> out;
  for (const ProofRecord& r : records) out.push_back(r.id);
  return out;
}

ProofRecord read(SqliteJournal& j, const std::string& id) {
  auto p = j.proof(id);
  if (!p) {
    ADD_FAILURE() << p.error().what();
    return {};
  }
  if (!*p) {
    ADD_FAILURE() << "no proof " << id;
    return {};
  }
  return **p;
}

std::size_t count_of(SqliteJournal& j, ProofState state) {
  auto counts = j.counts();
  if (!counts) {
    ADD_FAILURE() << counts.error().what();
    return 0;
  }
  for (const auto& [s, n] : *counts)
    if (s == state) return n;
  ADD_FAILURE() << "counts() has no entry for " << to_string(state);
  return 0;
}

ProofRecord ended(const std::string& id, ProofState state, std::int64_t at_ms) {
  ProofRecord p;
  p.id = id;
  p.state = state;
  p.finished_at_ms = at_ms;
  return p;
}

TEST(ProofStateWords, RoundTripAndRejectOtherWords) {
  for (ProofState s : {ProofState::queued, ProofState::running, ProofState::done,
                       ProofState::failed, ProofState::cancelled})
    EXPECT_EQ(proof_state_from(to_string(s)), s) << to_string(s);
  EXPECT_EQ(to_string(ProofState::cancelled), "cancelled");
  EXPECT_FALSE(proof_state_from("Done"));
  EXPECT_FALSE(proof_state_from(""));
  for (Priority p : {Priority::low, Priority::normal, Priority::high, Priority::critical})
    EXPECT_EQ(priority_from(to_string(p)), p) << to_string(p);
  EXPECT_EQ(to_string(Priority::critical), "critical");
  EXPECT_FALSE(priority_from("urgent"));
}

TEST_F(SqliteJournalTest, CreatesItsFileInWalModeWithTheSchemaVersion) {
  ASSERT_TRUE(open());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(file().c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  auto pragma = [&](const char* sql) {
    sqlite3_stmt* s = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &s, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    EXPECT_EQ(sqlite3_step(s), SQLITE_ROW) << sqlite3_errmsg(db);
    std::string v = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    return v;
  };
  // WAL mode is a property of the file: every later connection gets it.
  EXPECT_EQ(pragma("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(pragma("PRAGMA user_version"), std::to_string(SqliteJournal::kSchemaVersion));
  sqlite3_close(db);
}

TEST_F(SqliteJournalTest, KeysArePutReplacedRemovedAndListedByName) {
  auto j = open();
  ASSERT_TRUE(j);
  ASSERT_FALSE(j->put_key({"zeta", "/keys/zeta.zkey", "zkey", 30}));
  ASSERT_FALSE(j->put_key({"alpha", "/keys/alpha.params", "bellman", 10}));
  ASSERT_FALSE(j->put_key({"mid", "/keys/mid.zkey", "zkey", 20}));
  // Putting a name again replaces its record.
  ASSERT_FALSE(j->put_key({"zeta", "/keys/zeta-v2.params", "bellman", 40}));

  auto keys = j->keys();
  ASSERT_TRUE(keys) << keys.error().what();
  ASSERT_EQ(keys->size(), 3u);
  EXPECT_EQ((*keys)[0].name, "alpha");
  EXPECT_EQ((*keys)[0].path, "/keys/alpha.params");
  EXPECT_EQ((*keys)[0].format, "bellman");
  EXPECT_EQ((*keys)[0].loaded_at_ms, 10);
  EXPECT_EQ((*keys)[1].name, "mid");
  EXPECT_EQ((*keys)[2].name, "zeta");
  EXPECT_EQ((*keys)[2].path, "/keys/zeta-v2.params");
  EXPECT_EQ((*keys)[2].format, "bellman");
  EXPECT_EQ((*keys)[2].loaded_at_ms, 40);

  ASSERT_FALSE(j->remove_key("mid"));
  EXPECT_FALSE(j->remove_key("never-put")) << "removing an absent key is not an error";
  keys = j->keys();
  ASSERT_TRUE(keys) << keys.error().what();
  ASSERT_EQ(keys->size(), 2u);
  EXPECT_EQ((*keys)[0].name, "alpha");
  EXPECT_EQ((*keys)[1].name, "zeta");
}

TEST_F(SqliteJournalTest, AcceptRecordsEveryFieldOfTheRequestAndReadsItBack) {
  auto j = open();
  ASSERT_TRUE(j);
  ProofRecord file = request("p-file", "client's key'); DROP TABLE proofs; --");
  file.priority = Priority::critical;
  ProofRecord shm = request("p-shm", "", 1'700'000'000'123);
  shm.witness = {WitnessSource::Kind::shm, "", false, "/stoker-witness-7", 0xFFFF'FFFF'0000'0010ull,
                 0x8000'0000'0000'0001ull, 1000};
  shm.priority = Priority::low;
  // accept() records the request only: the later stages' fields start empty.
  shm.state = ProofState::done;
  shm.attempts = 9;
  shm.started_at_ms = 5;
  shm.finished_at_ms = 6;
  shm.proof_json = "{}";
  shm.error = "stale";

  for (const ProofRecord& p : {file, shm}) {
    auto a = j->accept(p);
    ASSERT_TRUE(a) << a.error().what();
    EXPECT_TRUE(a->created);
    ProofRecord expected = request(p.id);
    expected.witness = p.witness;
    expected.priority = p.priority;
    expected.idempotency_key = p.idempotency_key;
    expected.accepted_at_ms = p.accepted_at_ms;
    EXPECT_EQ(describe(a->record), describe(expected));
    EXPECT_EQ(describe(read(*j, p.id)), describe(expected));
  }
}

TEST_F(SqliteJournalTest, ASecondAcceptWithAnIdempotencyKeyReturnsTheFirstRecord) {
  auto j = open();
  ASSERT_TRUE(j);
  auto first = j->accept(request("first", "order-17", 100));
  ASSERT_TRUE(first) << first.error().what();
  ASSERT_TRUE(first->created);
  ASSERT_FALSE(j->mark_running("first", 150));

  auto again = j->accept(request("second", "order-17", 200));
  ASSERT_TRUE(again) << again.error().what();
  EXPECT_FALSE(again->created);
  // The record as it is now, not as it was accepted.
  EXPECT_EQ(again->record.id, "first");
  EXPECT_EQ(again->record.accepted_at_ms, 100);
  EXPECT_EQ(again->record.state, ProofState::running);
  auto second = j->proof("second");
  ASSERT_TRUE(second) << second.error().what();
  EXPECT_FALSE(*second) << "the second request must record nothing";

  // Requests without a key are never taken for one another.
  for (const char* id : {"plain-1", "plain-2"}) {
    auto a = j->accept(request(id));
    ASSERT_TRUE(a) << a.error().what();
    EXPECT_TRUE(a->created) << id;
  }
  EXPECT_EQ(count_of(*j, ProofState::queued), 2u);
  EXPECT_EQ(count_of(*j, ProofState::running), 1u);

  // The lookup a retry is answered by, before its witness is read again.
  auto by_key = j->proof_by_idempotency_key("order-17");
  ASSERT_TRUE(by_key) << by_key.error().what();
  ASSERT_TRUE(*by_key);
  EXPECT_EQ((*by_key)->id, "first");
  for (const char* key : {"", "order-18"}) {
    auto none = j->proof_by_idempotency_key(key);
    ASSERT_TRUE(none) << none.error().what();
    EXPECT_FALSE(*none) << "'" << key << "'";
  }
}

TEST_F(SqliteJournalTest, AnIdAlreadyRecordedOrAnEmptyIdIsRefused) {
  auto j = open();
  ASSERT_TRUE(j);
  ASSERT_TRUE(j->accept(request("dup-7", "", 1)));
  auto again = j->accept(request("dup-7", "", 2));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, make_error_code(Errc::invalid_argument));
  EXPECT_NE(again.error().what().find("dup-7"), std::string::npos) << again.error().what();
  EXPECT_EQ(read(*j, "dup-7").accepted_at_ms, 1) << "the first record must stay as it was";

  auto empty = j->accept(request(""));
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code, make_error_code(Errc::invalid_argument));
}

TEST_F(SqliteJournalTest, EightThreadsAcceptingOneIdempotencyKeyMakeOneRecord) {
  auto j = open();
  ASSERT_TRUE(j);
  constexpr int kThreads = 8;
  std::vector<Result<Journal::Accepted>> results(kThreads, Error(Errc::invalid_argument));
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      results[t] = j->accept(request("p" + std::to_string(t), "same-key", t));
    });
  for (std::thread& t : threads) t.join();

  int created = 0;
  std::string winner;
  for (const auto& r : results) {
    ASSERT_TRUE(r) << r.error().what();
    if (r->created) {
      ++created;
      winner = r->record.id;
    }
  }
  EXPECT_EQ(created, 1);
  for (const auto& r : results) EXPECT_EQ(r->record.id, winner);
  auto all = j->unfinished();
  ASSERT_TRUE(all) << all.error().what();
  EXPECT_EQ(ids(*all), std::vector<std::string>{winner});
}

// The same through two connections to one file, as two daemons (or a
// daemon and a tool) would have: SQLite's locks, not our mutex, order them.
TEST_F(SqliteJournalTest, AcceptsRacingThroughTwoConnectionsMakeOneRecordPerKey) {
  auto a = open();
  auto b = open();
  ASSERT_TRUE(a && b);
  constexpr int kThreads = 8, kKeys = 25;
  std::vector<int> created(kKeys, 0);
  std::vector<std::string> failures;
  std::mutex m;
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      SqliteJournal& j = t % 2 == 0 ? *a : *b;
      start.arrive_and_wait();
      for (int k = 0; k < kKeys; ++k) {
        auto r = j.accept(request("k" + std::to_string(k) + "-t" + std::to_string(t),
                                  "key-" + std::to_string(k), k));
        std::lock_guard lock(m);
        if (!r)
          failures.push_back(r.error().what());
        else if (r->created)
          ++created[k];
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_TRUE(failures.empty()) << failures.front();
  for (int k = 0; k < kKeys; ++k) EXPECT_EQ(created[k], 1) << "key-" << k;
  EXPECT_EQ(count_of(*a, ProofState::queued), std::size_t{kKeys});
}

TEST_F(SqliteJournalTest, ManyThreadsRunningProofsThroughTheirStatesLoseNothing) {
  auto j = open();
  ASSERT_TRUE(j);
  constexpr int kThreads = 8, kEach = 20;
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int i = 0; i < kEach; ++i) {
        const std::string id = "t" + std::to_string(t) + "-" + std::to_string(i);
        ProofRecord done = ended(id, ProofState::done, 3);
        done.proof_json = id;
        if (!j->accept(request(id)) || j->mark_running(id, 2) || j->finish(done) || !j->counts())
          ++failures;
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(count_of(*j, ProofState::done), std::size_t{kThreads * kEach});
  EXPECT_EQ(read(*j, "t5-17").proof_json, "t5-17");
}

TEST_F(SqliteJournalTest, ProofsMoveThroughTheirStatesAndUnfinishedListsThemInAcceptOrder) {
  auto j = open();
  ASSERT_TRUE(j);
  // The clock stepped back between accepts: the order is still the accepts'.
  ASSERT_TRUE(j->accept(request("a", "", 300)));
  ASSERT_TRUE(j->accept(request("b", "", 200)));
  ASSERT_TRUE(j->accept(request("c", "", 100)));

  ASSERT_FALSE(j->mark_running("b", 1000));
  ProofRecord b = read(*j, "b");
  EXPECT_EQ(b.state, ProofState::running);
  EXPECT_EQ(b.started_at_ms, 1000);
  EXPECT_EQ(b.attempts, 1u);
  auto unfinished = j->unfinished();
  ASSERT_TRUE(unfinished) << unfinished.error().what();
  EXPECT_EQ(ids(*unfinished), (std::vector<std::string>{"a", "b", "c"}));

  // Found running after the daemon died: started again, counted again.
  ASSERT_FALSE(j->mark_running("b", 2000));
  b = read(*j, "b");
  EXPECT_EQ(b.state, ProofState::running);
  EXPECT_EQ(b.started_at_ms, 2000);
  EXPECT_EQ(b.attempts, 2u);

  ASSERT_FALSE(j->finish(ended("b", ProofState::done, 2500)));
  ASSERT_FALSE(j->finish(ended("a", ProofState::cancelled, 2600)));  // cancelled while queued
  unfinished = j->unfinished();
  ASSERT_TRUE(unfinished) << unfinished.error().what();
  EXPECT_EQ(ids(*unfinished), std::vector<std::string>{"c"});
  EXPECT_EQ(read(*j, "a").started_at_ms, 0) << "a proof cancelled while queued never started";
}

TEST_F(SqliteJournalTest, RequeueTakesARunningProofBackToQueued) {
  auto j = open();
  ASSERT_TRUE(j);
  ASSERT_TRUE(j->accept(request("r")));
  ASSERT_FALSE(j->mark_running("r", 10));
  ASSERT_FALSE(j->requeue("r"));
  ProofRecord r = read(*j, "r");
  EXPECT_EQ(r.state, ProofState::queued);
  EXPECT_EQ(r.started_at_ms, 0);
  EXPECT_EQ(r.attempts, 1u) << "the attempt made stays counted";
  EXPECT_FALSE(j->requeue("r")) << "a queued proof stays queued";
  EXPECT_EQ(read(*j, "r").state, ProofState::queued);
  ASSERT_FALSE(j->mark_running("r", 20));
  EXPECT_EQ(read(*j, "r").attempts, 2u);
}

TEST_F(SqliteJournalTest, FinishStoresTheResultsAndAProofEndsOnce) {
  auto j = open();
  ASSERT_TRUE(j);
  for (const char* id : {"ok", "bad", "gone"}) ASSERT_TRUE(j->accept(request(id)));
  ASSERT_FALSE(j->mark_running("ok", 10));
  ASSERT_FALSE(j->mark_running("bad", 11));

  ProofRecord ok = ended("ok", ProofState::done, 20);
  ok.proof_json = R"({"pi_a":["1","2","1"],"protocol":"groth16","curve":"bn128"})";
  ok.public_json = R"(["33"])";
  ok.timings_json = R"({"queued_ms":1,"prove_ms":9})";
  ASSERT_FALSE(j->finish(ok));
  ProofRecord bad = ended("bad", ProofState::failed, 21);
  bad.error = "witness 'bad' does not satisfy the circuit: constraint 3";
  ASSERT_FALSE(j->finish(bad));
  ProofRecord gone = ended("gone", ProofState::cancelled, 22);
  gone.error = "cancelled by the client";
  ASSERT_FALSE(j->finish(gone));

  const ProofRecord got = read(*j, "ok");
  EXPECT_EQ(got.state, ProofState::done);
  EXPECT_EQ(got.finished_at_ms, 20);
  EXPECT_EQ(got.started_at_ms, 10);
  EXPECT_EQ(got.proof_json, ok.proof_json);
  EXPECT_EQ(got.public_json, ok.public_json);
  EXPECT_EQ(got.timings_json, ok.timings_json);
  EXPECT_EQ(got.error, "");
  EXPECT_EQ(read(*j, "bad").state, ProofState::failed);
  EXPECT_EQ(read(*j, "bad").error, bad.error);
  EXPECT_EQ(read(*j, "gone").state, ProofState::cancelled);
  EXPECT_EQ(read(*j, "gone").error, gone.error);

  // A proof that ended is not ended again, started again or requeued: the
  // record keeps its first end.
  ProofRecord late = ended("ok", ProofState::cancelled, 30);
  for (const Error& e : {j->finish(late), j->mark_running("ok", 31), j->requeue("ok")}) {
    EXPECT_EQ(e.code, make_error_code(Errc::invalid_argument)) << e.what();
    EXPECT_NE(e.what().find("'ok'"), std::string::npos) << e.what();
    EXPECT_NE(e.what().find("done"), std::string::npos) << e.what();
  }
  EXPECT_EQ(describe(read(*j, "ok")), describe(got));

  // Only done, failed and cancelled are ends.
  ASSERT_TRUE(j->accept(request("q")));
  const Error e = j->finish(ended("q", ProofState::running, 40));
  EXPECT_EQ(e.code, make_error_code(Errc::invalid_argument)) << e.what();
  EXPECT_EQ(read(*j, "q").state, ProofState::queued);
}

TEST_F(SqliteJournalTest, CountsGiveEveryStateOnceZerosIncluded) {
  auto j = open();
  ASSERT_TRUE(j);
  for (const char* id : {"q1", "q2", "q3", "r1", "d1", "d2"}) ASSERT_TRUE(j->accept(request(id)));
  ASSERT_FALSE(j->mark_running("r1", 1));
  ASSERT_FALSE(j->finish(ended("d1", ProofState::done, 2)));
  ASSERT_FALSE(j->finish(ended("d2", ProofState::done, 2)));
  auto counts = j->counts();
  ASSERT_TRUE(counts) << counts.error().what();
  const std::vector<std::pair<ProofState, std::size_t>> expected = {{ProofState::queued, 3},
                                                                    {ProofState::running, 1},
                                                                    {ProofState::done, 2},
                                                                    {ProofState::failed, 0},
                                                                    {ProofState::cancelled, 0}};
  EXPECT_EQ(*counts, expected);
}

TEST_F(SqliteJournalTest, PurgeRemovesAndReturnsProofsThatEndedBeforeTheTimeOnly) {
  auto j = open();
  ASSERT_TRUE(j);
  for (const char* id : {"done-100", "failed-200", "cancelled-300", "running", "queued"})
    ASSERT_TRUE(j->accept(request(id)));
  ASSERT_FALSE(j->finish(ended("done-100", ProofState::done, 100)));
  ASSERT_FALSE(j->finish(ended("failed-200", ProofState::failed, 200)));
  ASSERT_FALSE(j->finish(ended("cancelled-300", ProofState::cancelled, 300)));
  ASSERT_FALSE(j->mark_running("running", 50));

  auto purged = j->purge_finished_before(300);
  ASSERT_TRUE(purged) << purged.error().what();
  EXPECT_EQ(ids(*purged), (std::vector<std::string>{"done-100", "failed-200"}));
  // The caller deletes the witness copies it owned from what it gets back.
  EXPECT_EQ((*purged)[0].witness.path, "/var/lib/stoker/witness/done-100.wtns");
  EXPECT_TRUE((*purged)[0].witness.owned);
  for (const char* id : {"done-100", "failed-200"}) {
    auto p = j->proof(id);
    ASSERT_TRUE(p) << p.error().what();
    EXPECT_FALSE(*p) << id;
  }
  EXPECT_EQ(read(*j, "cancelled-300").state, ProofState::cancelled);

  purged = j->purge_finished_before(INT64_MAX);
  ASSERT_TRUE(purged) << purged.error().what();
  EXPECT_EQ(ids(*purged), std::vector<std::string>{"cancelled-300"});
  auto unfinished = j->unfinished();
  ASSERT_TRUE(unfinished) << unfinished.error().what();
  EXPECT_EQ(ids(*unfinished), (std::vector<std::string>{"running", "queued"}));
}

TEST_F(SqliteJournalTest, EverythingIsThereAfterClosingAndOpeningAgain) {
  std::vector<std::string> before;
  {
    auto j = open();
    ASSERT_TRUE(j);
    ASSERT_FALSE(j->put_key({"k1", "/keys/k1.zkey", "zkey", 7}));
    ASSERT_TRUE(j->accept(request("queued", "idem-q", 1)));
    ASSERT_TRUE(j->accept(request("running", "", 2)));
    ASSERT_TRUE(j->accept(request("done", "idem-d", 3)));
    ASSERT_FALSE(j->mark_running("running", 4));
    ProofRecord done = ended("done", ProofState::done, 5);
    done.proof_json = "{\"proof\":1}";
    done.public_json = "[\"1\"]";
    done.timings_json = "{\"total_ms\":4}";
    ASSERT_FALSE(j->finish(done));
    for (const char* id : {"queued", "running", "done"}) before.push_back(describe(read(*j, id)));
  }
  auto j = open();
  ASSERT_TRUE(j);
  auto keys = j->keys();
  ASSERT_TRUE(keys) << keys.error().what();
  ASSERT_EQ(keys->size(), 1u);
  EXPECT_EQ((*keys)[0].path, "/keys/k1.zkey");
  EXPECT_EQ((*keys)[0].loaded_at_ms, 7);
  std::vector<std::string> after;
  for (const char* id : {"queued", "running", "done"}) after.push_back(describe(read(*j, id)));
  EXPECT_EQ(after, before);
  // The idempotency keys still hold.
  auto again = j->accept(request("other", "idem-d", 9));
  ASSERT_TRUE(again) << again.error().what();
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->record.id, "done");
}

// A child process accepts proofs and writes each one's number to a pipe
// once accept() has returned; it then exits without closing the journal, or
// is killed by the parent (SIGKILL) while it goes on accepting. Killing a
// process keeps the kernel's page cache, so this checks that a returned
// accept() has committed to the file (and that a half-done one leaves
// nothing half-written), not that the disk synced; synchronous=FULL does
// the latter.
class ChildAccepts {
 public:
  // Accepts proofs "c0", "c1", ... up to `limit` (0: no limit), then _exit(0).
  explicit ChildAccepts(const std::string& directory, std::uint32_t limit) {
    int fds[2];
    if (::pipe(fds) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(fds[0]);
      auto j = SqliteJournal::open(directory);
      if (!j) ::_exit(2);
      for (std::uint32_t i = 0; limit == 0 || i < limit; ++i) {
        auto a = (*j)->accept(request("c" + std::to_string(i), "ck" + std::to_string(i), i));
        if (!a || !a->created) ::_exit(3);
        if (::write(fds[1], &i, sizeof i) != sizeof i) ::_exit(4);
      }
      ::_exit(0);  // no destructor: the journal is never closed
    }
    ::close(fds[1]);
    read_fd_ = fds[0];
  }
  ~ChildAccepts() {
    if (read_fd_ >= 0) ::close(read_fd_);
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  bool started() const { return pid_ > 0 && read_fd_ >= 0; }
  // The next accepted number, or false at the end of the pipe.
  bool next(std::uint32_t& i) { return ::read(read_fd_, &i, sizeof i) == sizeof i; }
  int kill_and_wait() {
    ::kill(pid_, SIGKILL);
    return wait();
  }
  int wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
    return status;
  }

 private:
  pid_t pid_ = -1;
  int read_fd_ = -1;
  bool reaped_ = false;
};

// What the child recorded as proof number i.
ProofRecord child_record(std::uint32_t i) {
  return request("c" + std::to_string(i), "ck" + std::to_string(i), i);
}

// Every proof the child reported is there whole, and nothing but whole
// records of the child's is.
void expect_reported_proofs(SqliteJournal& j, const std::vector<std::uint32_t>& reported) {
  for (std::uint32_t i : reported)
    EXPECT_EQ(describe(read(j, "c" + std::to_string(i))), describe(child_record(i)));
  auto all = j.unfinished();
  ASSERT_TRUE(all) << all.error().what();
  ASSERT_GE(all->size(), reported.size());
  // A kill during the next accept may or may not have let it commit.
  EXPECT_LE(all->size(), reported.size() + 1);
  for (std::size_t i = 0; i < all->size(); ++i)
    EXPECT_EQ(describe((*all)[i]), describe(child_record(static_cast<std::uint32_t>(i))));
}

TEST_F(SqliteJournalTest, ProofsAcceptedBeforeTheProcessExitsWithoutClosingAreThere) {
  constexpr std::uint32_t kProofs = 20;
  std::vector<std::uint32_t> reported;
  {
    ChildAccepts child(dir_.string(), kProofs);
    ASSERT_TRUE(child.started());
    for (std::uint32_t i; child.next(i);) reported.push_back(i);
    const int status = child.wait();
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  }
  ASSERT_EQ(reported.size(), kProofs);
  // Not folded into the database yet: opening again recovers it from the WAL.
  EXPECT_TRUE(fs::exists(file() + "-wal"));
  auto j = open();
  ASSERT_TRUE(j);
  expect_reported_proofs(*j, reported);
}

TEST_F(SqliteJournalTest, ProofsAcceptedBeforeSigkillAreThere) {
  constexpr std::uint32_t kBeforeKill = 40;
  std::vector<std::uint32_t> reported;
  {
    ChildAccepts child(dir_.string(), 0);
    ASSERT_TRUE(child.started());
    for (std::uint32_t i; reported.size() < kBeforeKill && child.next(i);) reported.push_back(i);
    // The child runs on while the pipe has room: killed somewhere after its
    // 40th acceptance, maybe inside an accept. What it reported before the
    // kill is still in the pipe.
    const int status = child.kill_and_wait();
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child status " << status;
    for (std::uint32_t i; child.next(i);) reported.push_back(i);
  }
  ASSERT_GE(reported.size(), kBeforeKill);
  auto j = open();
  ASSERT_TRUE(j);
  expect_reported_proofs(*j, reported);
}

// A start and a done proof's result are committed without an fsync of
// their own, but committed: a process that ends right after them without
// closing the journal leaves the one proof running with its attempt
// counted and the other done with its result, and an acceptance after them
// (synced again) is whole.
TEST_F(SqliteJournalTest, AStartAndAResultOutliveTheProcessThatWroteThem) {
  const pid_t pid = ::fork();
  ASSERT_NE(pid, -1);
  if (pid == 0) {
    auto j = SqliteJournal::open(dir_.string());
    if (!j || !(*j)->accept(request("s")) || (*j)->mark_running("s", 77)) ::_exit(2);
    if (!(*j)->accept(request("t")) || (*j)->mark_running("t", 78)) ::_exit(3);
    ProofRecord done = read(**j, "t");
    done.state = ProofState::done;
    done.finished_at_ms = 79;
    done.proof_json = "{}";
    if ((*j)->finish(done)) ::_exit(4);
    if (!(*j)->accept(request("u"))) ::_exit(5);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  auto j = open();
  ASSERT_TRUE(j);
  const ProofRecord s = read(*j, "s");
  EXPECT_EQ(s.state, ProofState::running);
  EXPECT_EQ(s.started_at_ms, 77);
  EXPECT_EQ(s.attempts, 1u);
  const ProofRecord t = read(*j, "t");
  EXPECT_EQ(t.state, ProofState::done);
  EXPECT_EQ(t.finished_at_ms, 79);
  EXPECT_EQ(t.proof_json, "{}");
  EXPECT_EQ(read(*j, "u").state, ProofState::queued);
}

TEST_F(SqliteJournalTest, AFileThatIsNotADatabaseIsRefusedNamingItAndLeftAlone) {
  std::string garbage;
  for (int i = 0; i < 4096; ++i) garbage.push_back(static_cast<char>((i * 131 + 7) % 251));
  std::ofstream(file(), std::ios::binary) << garbage;
  auto j = SqliteJournal::open(dir_.string());
  ASSERT_FALSE(j);
  EXPECT_EQ(j.error().code, make_error_code(Errc::io_error));
  EXPECT_NE(j.error().what().find(file()), std::string::npos) << j.error().what();
  std::ifstream in(file(), std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), garbage);
}

TEST_F(SqliteJournalTest, AJournalOfANewerSchemaVersionIsRefused) {
  ASSERT_TRUE(open());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(file().c_str(), &db), SQLITE_OK);
  const std::string newer =
      "PRAGMA user_version = " + std::to_string(SqliteJournal::kSchemaVersion + 1);
  ASSERT_EQ(sqlite3_exec(db, newer.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);

  auto j = SqliteJournal::open(dir_.string());
  ASSERT_FALSE(j);
  EXPECT_EQ(j.error().code, make_error_code(Errc::io_error));
  const std::string what = j.error().what();
  EXPECT_NE(what.find(file()), std::string::npos) << what;
  EXPECT_NE(what.find("schema version " + std::to_string(SqliteJournal::kSchemaVersion + 1)),
            std::string::npos)
      << what;
}

TEST_F(SqliteJournalTest, AMissingDirectoryIsRefusedNamingIt) {
  const std::string missing = (dir_ / "not-made").string();
  auto j = SqliteJournal::open(missing);
  ASSERT_FALSE(j);
  EXPECT_NE(j.error().what().find(missing), std::string::npos) << j.error().what();
  EXPECT_FALSE(fs::exists(missing)) << "open() must not create the directory";
}

TEST_F(SqliteJournalTest, UnknownIdsAreRefusedNamingTheId) {
  auto j = open();
  ASSERT_TRUE(j);
  ASSERT_TRUE(j->accept(request("known")));
  for (const Error& e : {j->mark_running("nope-42", 1),
                         j->finish(ended("nope-42", ProofState::done, 1)), j->requeue("nope-42")}) {
    EXPECT_EQ(e.code, make_error_code(Errc::invalid_argument)) << e.what();
    EXPECT_NE(e.what().find("'nope-42'"), std::string::npos) << e.what();
  }
  auto p = j->proof("nope-42");
  ASSERT_TRUE(p) << p.error().what();
  EXPECT_FALSE(*p);
  EXPECT_EQ(read(*j, "known").state, ProofState::queued) << "no other record was touched";
}

}  // namespace
}  // namespace stoker::serve
