// The partition state machine (engine/detail/partition_lifecycle.hpp): every
// path a partition can take ends with nothing counted, and events that
// cannot happen in a phase are refused.
#include "engine/detail/partition_lifecycle.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <utility>
#include <vector>

namespace stoker::engine::detail {
namespace {

using P = PartPhase;
using E = PartEvent;

constexpr P kPhases[] = {P::queued,  P::preparing, P::ready, P::streaming,
                         P::running, P::finishing, P::done,  P::dropped};
constexpr E kEvents[] = {E::prepare,   E::produced,    E::production_failed, E::dispatched,
                         E::withdrawn, E::device_done, E::abandoned,         E::finished};

struct Counts {
  std::size_t lookahead = 0, active = 0;
};

// Runs `events` from queued and gives the counts at each step.
std::vector<Counts> walk(std::initializer_list<E> events, P& phase) {
  phase = P::queued;
  Counts c;
  std::vector<Counts> steps;
  for (E e : events) {
    advance(phase, e, c.lookahead, c.active);
    steps.push_back(c);
  }
  return steps;
}

TEST(PartitionLifecycle, EveryPathEndsWithNothingCounted) {
  const std::vector<std::pair<std::vector<E>, P>> paths = {
      {{E::prepare, E::produced, E::dispatched, E::device_done, E::finished}, P::done},
      {{E::prepare, E::produced, E::dispatched, E::finished}, P::done},  // the device failed
      {{E::prepare, E::production_failed}, P::dropped},
      {{E::prepare, E::produced, E::withdrawn}, P::dropped},
      {{E::prepare, E::dispatched, E::produced, E::device_done, E::finished}, P::done},
      {{E::prepare, E::dispatched, E::production_failed, E::abandoned}, P::dropped},
  };
  for (const auto& [events, end] : paths) {
    P phase = P::queued;
    Counts c;
    for (E e : events) advance(phase, e, c.lookahead, c.active);
    EXPECT_EQ(phase, end);
    EXPECT_EQ(c.lookahead, 0u);
    EXPECT_EQ(c.active, 0u);
  }
}

// A streamed partition holds a slot while its producer still runs: its job
// cannot complete until both have ended.
TEST(PartitionLifecycle, AStreamedPartitionCountsItsProducerAndItsSlot) {
  P phase;
  const auto steps = walk({E::prepare, E::dispatched, E::produced, E::device_done}, phase);
  EXPECT_EQ(steps[0].active, 1u);  // producing
  EXPECT_EQ(steps[1].active, 2u);  // producing and on a slot
  EXPECT_EQ(steps[2].active, 1u);  // on the slot
  EXPECT_EQ(steps[3].active, 1u);  // host copies pending
  for (const auto& s : steps) EXPECT_EQ(s.lookahead, 1u);
}

// A ready partition holds its blocks but nothing runs for it: it counts in
// the lookahead, not in its job's active work.
TEST(PartitionLifecycle, AReadyPartitionHoldsLookaheadOnly) {
  P phase;
  const auto steps = walk({E::prepare, E::produced}, phase);
  EXPECT_EQ(phase, P::ready);
  EXPECT_EQ(steps.back().lookahead, 1u);
  EXPECT_EQ(steps.back().active, 0u);
}

TEST(PartitionLifecycle, EndedPartitionsTakeNoEvent) {
  for (E e : kEvents) {
    EXPECT_FALSE(next_phase(P::done, e)) << to_string(e);
    EXPECT_FALSE(next_phase(P::dropped, e)) << to_string(e);
  }
}

// The table as a whole: the number of legal (phase, event) pairs is what the
// header draws, so an edge added or lost shows here.
TEST(PartitionLifecycle, TheTableHasExactlyTheDrawnEdges) {
  int edges = 0;
  for (P p : kPhases)
    for (E e : kEvents) edges += next_phase(p, e).has_value();
  EXPECT_EQ(edges, 12);
  EXPECT_FALSE(next_phase(P::queued, E::dispatched))
      << "a slot never takes a partition without blocks";
  EXPECT_FALSE(next_phase(P::streaming, E::device_done))
      << "a streamed launch ends only after its producer";
}

void impossible_event() {
  P phase = P::queued;
  std::size_t lookahead = 0, active = 0;
  advance(phase, E::finished, lookahead, active);
}

TEST(PartitionLifecycleDeathTest, AnImpossibleEventEndsTheProcessNamingIt) {
  EXPECT_DEATH(impossible_event(), "partition event 'finished' in phase 'queued'");
}

}  // namespace
}  // namespace stoker::engine::detail
