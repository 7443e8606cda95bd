#include "tools/serve/metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <latch>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace stoker::serve {
namespace {

TEST(Metrics, RendersFamiliesInRegistrationOrderAndSeriesInLabelOrder) {
  Metrics m;
  Counter& proofs =
      m.counter("stoker_proofs_total", "Proofs finished, by outcome.", {"key", "state"});
  Gauge& queued = m.gauge("stoker_queued_proofs", "Proofs waiting to run.");
  Histogram& duration =
      m.histogram("stoker_proof_duration_seconds", "Accept to finish.", {"key"}, {0.5, 1, 2.5});
  proofs.add({"k2", "done"});
  proofs.add({"k1", "failed"});
  proofs.add({"k1", "done"}, 3);
  queued.set({}, 7);
  duration.observe({"k1"}, 0.25);
  duration.observe({"k1"}, 1);
  duration.observe({"k1"}, 10);

  EXPECT_EQ(m.render(),
            "# HELP stoker_proofs_total Proofs finished, by outcome.\n"
            "# TYPE stoker_proofs_total counter\n"
            "stoker_proofs_total{key=\"k1\",state=\"done\"} 3\n"
            "stoker_proofs_total{key=\"k1\",state=\"failed\"} 1\n"
            "stoker_proofs_total{key=\"k2\",state=\"done\"} 1\n"
            "# HELP stoker_queued_proofs Proofs waiting to run.\n"
            "# TYPE stoker_queued_proofs gauge\n"
            "stoker_queued_proofs 7\n"
            "# HELP stoker_proof_duration_seconds Accept to finish.\n"
            "# TYPE stoker_proof_duration_seconds histogram\n"
            "stoker_proof_duration_seconds_bucket{key=\"k1\",le=\"0.5\"} 1\n"
            "stoker_proof_duration_seconds_bucket{key=\"k1\",le=\"1\"} 2\n"
            "stoker_proof_duration_seconds_bucket{key=\"k1\",le=\"2.5\"} 2\n"
            "stoker_proof_duration_seconds_bucket{key=\"k1\",le=\"+Inf\"} 3\n"
            "stoker_proof_duration_seconds_sum{key=\"k1\"} 11.25\n"
            "stoker_proof_duration_seconds_count{key=\"k1\"} 3\n");
}

TEST(Metrics, FamiliesWithoutLabelsReadZeroBeforeAnyUseAndLabelledOnesHaveNoSeries) {
  Metrics m;
  m.counter("restarts_total", "Restarts.");
  m.histogram("body_bytes", "Request bodies.", {}, {100});
  m.counter("requests_total", "Requests.", {"path"});
  EXPECT_EQ(m.render(),
            "# HELP restarts_total Restarts.\n"
            "# TYPE restarts_total counter\n"
            "restarts_total 0\n"
            "# HELP body_bytes Request bodies.\n"
            "# TYPE body_bytes histogram\n"
            "body_bytes_bucket{le=\"100\"} 0\n"
            "body_bytes_bucket{le=\"+Inf\"} 0\n"
            "body_bytes_sum 0\n"
            "body_bytes_count 0\n"
            "# HELP requests_total Requests.\n"
            "# TYPE requests_total counter\n");
  EXPECT_EQ(Metrics().render(), "");
}

TEST(Metrics, EscapesBackslashQuoteAndNewlineInLabelValuesAndHelp) {
  Metrics m;
  Gauge& g = m.gauge("paths", "A \\ backslash,\na newline and \"quotes\".", {"path"});
  g.set({"C:\\dir\\\"x\"\nnext"}, 1);
  EXPECT_EQ(m.render(),
            "# HELP paths A \\\\ backslash,\\na newline and \"quotes\".\n"
            "# TYPE paths gauge\n"
            "paths{path=\"C:\\\\dir\\\\\\\"x\\\"\\nnext\"} 1\n");
}

TEST(Metrics, RendersInvalidUtf8InLabelValuesAsReplacementCharacters) {
  Metrics m;
  Gauge& g = m.gauge("keys", "Keys.", {"name"});
  // A stray continuation byte, a cut-short sequence, overlong forms of '/'
  // in two and three bytes, a surrogate, a code point past U+10FFFF; then
  // valid two-, three- and four-byte characters.
  g.set({"a\x80"
         "b\xE2\x82"
         "c\xC0\xAF"
         "d\xE0\x80\xAF"
         "e\xED\xA0\x80"
         "f\xF4\x90\x80\x80"},
        1);
  g.set({"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x94\x91"}, 2);
  const std::string r = m.render();
  const std::string r1 = "\xEF\xBF\xBD", r2 = r1 + r1, r3 = r2 + r1, r4 = r3 + r1;
  EXPECT_NE(r.find("keys{name=\"a" + r1 + "b" + r2 + "c" + r2 + "d" + r3 + "e" + r3 + "f" + r4 +
                   "\"} 1\n"),
            std::string::npos)
      << r;
  EXPECT_NE(r.find("keys{name=\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x94\x91\"} 2\n"), std::string::npos)
      << r;
}

TEST(Metrics, FormatsValuesSoThatPrometheusReadsThemBack) {
  Metrics m;
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<std::pair<double, std::string>> cases = {
      {0, "0"},
      {-3, "-3"},
      {1e6, "1000000"},                          // not 1e+06
      {9007199254740992.0, "9007199254740992"},  // 2^53, still exact
      {1e20, "1e+20"},                           // past 2^53: shortest round trip
      {0.1, "0.1"},
      {1.5e-7, "1.5e-07"},
      {1.0 / 3, "0.3333333333333333"},
      {inf, "+Inf"},
      {-inf, "-Inf"},
      {std::nan(""), "NaN"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    m.gauge("v" + std::to_string(i), "One value.").set({}, cases[i].first);
  }
  const std::string r = m.render();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string line = "\nv" + std::to_string(i) + " " + cases[i].second + "\n";
    EXPECT_NE(r.find(line), std::string::npos) << "want" << line << "in\n" << r;
  }
}

TEST(Histogram, BucketsAreCumulativeWithBoundsInclusiveAndNanOnlyInInf) {
  Metrics m;
  Histogram& h = m.histogram("size_bytes", "Sizes.", {}, {1, 10, 100});
  for (double v : {0.5, 1.0, 1.0, 5.0, 10.0, 50.0, 1000.0, -2.0}) h.observe({}, v);
  const std::string want_buckets =
      "size_bytes_bucket{le=\"1\"} 4\n"
      "size_bytes_bucket{le=\"10\"} 6\n"
      "size_bytes_bucket{le=\"100\"} 7\n"
      "size_bytes_bucket{le=\"+Inf\"} 8\n"
      "size_bytes_sum 1065.5\n"
      "size_bytes_count 8\n";
  EXPECT_NE(m.render().find(want_buckets), std::string::npos) << m.render();

  h.observe({}, std::nan(""));
  EXPECT_NE(m.render().find("size_bytes_bucket{le=\"100\"} 7\n"
                            "size_bytes_bucket{le=\"+Inf\"} 9\n"
                            "size_bytes_sum NaN\n"
                            "size_bytes_count 9\n"),
            std::string::npos)
      << m.render();
}

TEST(Histogram, ExponentialBucketsMultiplyFromStart) {
  EXPECT_EQ(exponential_buckets(0.001, 10, 4), (std::vector<double>{0.001, 0.01, 0.1, 1.0}));
  EXPECT_THROW(exponential_buckets(0, 2, 3), std::invalid_argument);
  EXPECT_THROW(exponential_buckets(1, 1, 3), std::invalid_argument);
  EXPECT_THROW(exponential_buckets(1, 2, 0), std::invalid_argument);
}

TEST(Gauge, ClearDropsEverySeriesSoARecomputedFigureLeavesNoStaleOne) {
  Metrics m;
  Gauge& used = m.gauge("device_memory_used_bytes", "Memory in use.", {"device"});
  used.set({"0"}, 5);
  used.set({"1"}, 6);
  used.clear();
  used.set({"1"}, 8);
  used.add({"1"}, -2);
  EXPECT_EQ(m.render(),
            "# HELP device_memory_used_bytes Memory in use.\n"
            "# TYPE device_memory_used_bytes gauge\n"
            "device_memory_used_bytes{device=\"1\"} 6\n");
}

// Lost updates show in the totals only when the threads really overlap;
// a missing lock is certain to show under ThreadSanitizer (tools/dev
// --sanitize thread).
TEST(Metrics, ConcurrentObservesFromEightThreadsAllCount) {
  Metrics m;
  Counter& c = m.counter("events_total", "Events.", {"thread_parity"});
  Gauge& g = m.gauge("level", "Level.");
  Histogram& h = m.histogram("latency_seconds", "Latency.", {}, {0.5});
  constexpr int threads = 8, per_thread = 20000;
  std::latch start(threads);  // all running before any observes
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const std::string parity = t % 2 ? "odd" : "even";
      start.arrive_and_wait();
      // One family at a time, so that the threads contend for each.
      for (int i = 0; i < per_thread; ++i) c.add({parity});
      for (int i = 0; i < per_thread; ++i) g.add({}, 1);
      for (int i = 0; i < per_thread; ++i) {
        h.observe({}, i % 2 ? 1.0 : 0.25);
        if (i % 1000 == 0) (void)m.render();  // scrapes race with the observers
      }
    });
  }
  for (std::thread& t : pool) t.join();
  const std::string n = std::to_string(threads * per_thread),
                    half = std::to_string(threads * per_thread / 2);
  const std::string r = m.render();
  EXPECT_NE(r.find("events_total{thread_parity=\"even\"} " + half + "\n"), std::string::npos) << r;
  EXPECT_NE(r.find("events_total{thread_parity=\"odd\"} " + half + "\n"), std::string::npos) << r;
  EXPECT_NE(r.find("\nlevel " + n + "\n"), std::string::npos) << r;
  EXPECT_NE(r.find("latency_seconds_bucket{le=\"0.5\"} " + half + "\n"), std::string::npos) << r;
  EXPECT_NE(r.find("latency_seconds_count " + n + "\n"), std::string::npos) << r;
  // 0.25 and 1.0 are exact in binary, so the sum is exact in any order.
  EXPECT_NE(
      r.find("latency_seconds_sum " + std::to_string(threads * per_thread / 2 * 5 / 4) + "\n"),
      std::string::npos)
      << r;
}

TEST(Metrics, RefusesNamesOutsidePrometheusRules) {
  Metrics m;
  EXPECT_THROW(m.gauge("", "h"), std::invalid_argument);
  EXPECT_THROW(m.gauge("1st", "h"), std::invalid_argument);
  EXPECT_THROW(m.gauge("has-dash", "h"), std::invalid_argument);
  EXPECT_THROW(m.gauge("has space", "h"), std::invalid_argument);
  EXPECT_THROW(m.gauge("caf\xC3\xA9", "h"), std::invalid_argument);
  EXPECT_THROW(m.gauge("__reserved", "h"), std::invalid_argument);
  EXPECT_THROW(m.gauge("good", "h", {"0label"}), std::invalid_argument);
  EXPECT_THROW(m.gauge("good", "h", {"a:b"}), std::invalid_argument);  // colons: names only
  EXPECT_THROW(m.gauge("good", "h", {"__name__"}), std::invalid_argument);
  EXPECT_THROW(m.gauge("good", "h", {"a", "a"}), std::invalid_argument);
  EXPECT_THROW(m.gauge("good", ""), std::invalid_argument);  // lint: help text required
  // The accepted forms: a colon in a metric name, a leading underscore.
  EXPECT_NO_THROW(m.gauge("ns:rule_rate", "h"));
  EXPECT_NO_THROW(m.gauge("_private", "h", {"_l", "L2"}));
  EXPECT_EQ(m.render().find("good"), std::string::npos) << "a refused family is not kept";
}

TEST(Metrics, RefusesNamesThatBreakTheTypeConventions) {
  Metrics m;
  EXPECT_THROW(m.counter("requests", "h"), std::invalid_argument);
  EXPECT_THROW(m.gauge("requests_total", "h"), std::invalid_argument);
  EXPECT_THROW(m.histogram("requests_total", "h", {}, {1}), std::invalid_argument);
  for (const char* name : {"x_bucket", "x_sum", "x_count"}) {
    EXPECT_THROW(m.gauge(name, "h"), std::invalid_argument) << name;
    EXPECT_THROW(m.histogram(name, "h", {}, {1}), std::invalid_argument) << name;
  }
  EXPECT_THROW(m.gauge("g", "h", {"le"}), std::invalid_argument);
  EXPECT_THROW(m.histogram("h", "h", {"le"}, {1}), std::invalid_argument);
  EXPECT_THROW(m.counter("c_total", "h", {"quantile"}), std::invalid_argument);
  m.gauge("taken", "h");
  EXPECT_THROW(m.gauge("taken", "h"), std::invalid_argument);
  EXPECT_THROW(m.histogram("taken", "h", {}, {1}), std::invalid_argument);
}

TEST(Metrics, RefusesMisuseOfASeries) {
  Metrics m;
  Counter& c = m.counter("c_total", "h", {"a", "b"});
  EXPECT_THROW(c.add({"x"}), std::invalid_argument);
  EXPECT_THROW(c.add({"x", "y", "z"}), std::invalid_argument);
  EXPECT_THROW(c.add({"x", "y"}, -1), std::invalid_argument);
  EXPECT_THROW(c.add({"x", "y"}, std::nan("")), std::invalid_argument);
  EXPECT_THROW(m.gauge("g", "h").set({"extra"}, 1), std::invalid_argument);
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_THROW(m.histogram("h1", "h", {}, {2, 1}), std::invalid_argument);
  EXPECT_THROW(m.histogram("h2", "h", {}, {1, 1}), std::invalid_argument);
  EXPECT_THROW(m.histogram("h3", "h", {}, {1, inf}), std::invalid_argument);
  EXPECT_THROW(m.histogram("h4", "h", {}, {std::nan("")}), std::invalid_argument);
  EXPECT_EQ(m.render().find("{a=\"x\""), std::string::npos) << "a refused add leaves no series";
}

}  // namespace
}  // namespace stoker::serve
