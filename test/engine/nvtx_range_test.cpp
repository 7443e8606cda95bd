// The engine's NVTX ranges as a profiler sees them (test/engine/
// nvtx_recorder.cpp attaches in place of Nsight Systems): every stage by
// name, in the "stoker" domain, nested on its thread, each range closed.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <thread>

#include "engine/detail/nvtx.hpp"
#include "test/engine/engine_test_util.hpp"
#include "test/engine/nvtx_recorder.hpp"

namespace stoker::test {
namespace {

namespace asio = boost::asio;
namespace nvtx = engine::detail::nvtx;
using nvtx_recorder::Event;

TEST(NvtxRanges, NestOnTheirThreadWithTheirNameAndPayload) {
  nvtx_recorder::take();
  {
    const nvtx::ScopedRange outer(nvtx::Stage::kernels, 7);
    ASSERT_TRUE(nvtx_recorder::attached());
    EXPECT_EQ(outer.level(), 0);
    {
      const nvtx::ScopedRange inner(nvtx::Stage::d2h, 8);
      EXPECT_EQ(inner.level(), 1);
    }
  }
  const auto events = nvtx_recorder::take();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].kind, Event::push);
  EXPECT_EQ(events[0].name, "kernels");
  EXPECT_EQ(events[0].payload, 7u);
  EXPECT_EQ(events[0].domain, "stoker");
  EXPECT_EQ(events[1].name, "d2h");
  EXPECT_EQ(events[1].payload, 8u);
  EXPECT_EQ(events[2].kind, Event::pop);
  EXPECT_EQ(events[3].kind, Event::pop);
}

TEST(NvtxRanges, SpansEndOnAnotherThreadAndOnce) {
  nvtx_recorder::take();
  nvtx::Span span(nvtx::Stage::partition, 3, "hpoly#3");
  nvtx::Span moved = std::move(span);
  std::thread([s = std::move(moved)]() mutable { s.end(); }).join();
  const auto events = nvtx_recorder::take();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, Event::start);
  EXPECT_EQ(events[0].name, "hpoly#3");
  EXPECT_EQ(events[1].kind, Event::end);
  EXPECT_EQ(events[1].id, events[0].id);
  EXPECT_NE(events[1].thread, events[0].thread);
}

// Two jobs on the host backend, one produced and one from pageable memory
// (staged): the timeline holds a range per job and per partition and every
// stage by name; on every thread pushes and pops pair up, and every range
// started has ended once the jobs completed.
TEST(NvtxRanges, AnEngineJobShowsEveryStageByName) {
  asio::io_context io;
  Engine engine(io.get_executor(), host_config(1));
  nvtx_recorder::take();
  std::shared_ptr<workloads::SyntheticRun> produced_run, pageable_run;
  std::error_code ec;
  run_job(engine, io, synthetic(produced_run, 2, 256 << 10, false, 0, "produced"), ec);
  ASSERT_FALSE(ec);
  run_job(engine, io, synthetic(pageable_run, 2, 256 << 10, true, 0, "pageable"), ec);
  ASSERT_FALSE(ec);
  expect_idle(engine);
  const auto events = nvtx_recorder::take();

  std::set<std::string> pushed, started;
  std::map<std::thread::id, int> depth;
  std::map<std::uint64_t, int> open;
  for (const auto& e : events) {
    EXPECT_EQ(e.domain, "stoker");
    switch (e.kind) {
      case Event::push:
        pushed.insert(e.name);
        ++depth[e.thread];
        break;
      case Event::pop:
        EXPECT_GT(depth[e.thread]--, 0) << "a pop without its push";
        break;
      case Event::start:
        started.insert(e.name);
        ++open[e.id];
        break;
      case Event::end:
        EXPECT_EQ(open[e.id]--, 1) << "a range ended twice or never started";
        break;
    }
  }
  for (const char* stage : {"producer", "staging", "h2d", "kernels", "d2h"})
    EXPECT_TRUE(pushed.count(stage)) << stage;
  for (const char* range : {"produced", "pageable", "produced#0", "produced#1", "pageable#1"})
    EXPECT_TRUE(started.count(range)) << range;
  for (const auto& [thread, d] : depth) EXPECT_EQ(d, 0) << "a range left open on a thread";
  for (const auto& [id, n] : open) EXPECT_EQ(n, 0) << "range " << id << " never ended";
}

}  // namespace
}  // namespace stoker::test
