// The life of one partition inside the engine, as one state machine: its
// phases, the events that move it, and the counts that follow from the
// phase. The engine thread is the only caller; stages elsewhere (producers,
// device runners, the host copies) report events through EngineCore, which
// moves the partition with JobTable::advance() and nothing else.
//
//   queued --prepare--> preparing          (blocks requested, producer to run)
//   preparing --produced--> ready          (waits for a slot)
//   preparing --production_failed--> dropped
//   preparing --dispatched--> streaming    (on a slot while its producer runs)
//   ready --dispatched--> running
//   ready --withdrawn--> dropped           (its job was cancelled or failed)
//   streaming --produced | production_failed--> running
//                                          (a failure reaches the launch through
//                                           its feed: the launch ends the partition)
//   running --device_done--> finishing     (bounce copies and verify on workers)
//   running --abandoned--> dropped         (streamed, its producer failed: nothing ran)
//   running | finishing --finished--> done (with the partition's result or error)
//
// The counts the scheduler needs are functions of the phase, never kept by
// hand: the lookahead (partitions holding pinned blocks or a slot, bounded
// by Config) counts every phase from preparing to finishing; a job's active
// count (what must end before its handler may run) counts a running
// producer and a held slot or pending host copies, so a streaming partition
// counts twice.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>

namespace stoker::engine::detail {

// A partition's identity and rank: higher priority first, then the job
// submitted first, then the lower index. Ordered sets of keys are the
// engine's queues.
struct PartKey {
  int neg_priority;
  std::uint64_t seq;
  std::size_t part;
  auto operator<=>(const PartKey&) const = default;
};

enum class PartPhase { queued, preparing, ready, streaming, running, finishing, done, dropped };

enum class PartEvent {
  prepare,
  produced,
  production_failed,
  dispatched,
  withdrawn,
  device_done,
  abandoned,
  finished,
};

// The phase `event` moves `from` to, or none where the event cannot happen
// in that phase.
constexpr std::optional<PartPhase> next_phase(PartPhase from, PartEvent event) noexcept {
  using P = PartPhase;
  using E = PartEvent;
  switch (from) {
    case P::queued:
      if (event == E::prepare) return P::preparing;
      break;
    case P::preparing:
      if (event == E::produced) return P::ready;
      if (event == E::production_failed) return P::dropped;
      if (event == E::dispatched) return P::streaming;
      break;
    case P::ready:
      if (event == E::dispatched) return P::running;
      if (event == E::withdrawn) return P::dropped;
      break;
    case P::streaming:
      if (event == E::produced || event == E::production_failed) return P::running;
      break;
    case P::running:
      if (event == E::device_done) return P::finishing;
      if (event == E::abandoned) return P::dropped;
      if (event == E::finished) return P::done;
      break;
    case P::finishing:
      if (event == E::finished) return P::done;
      break;
    case P::done:
    case P::dropped:
      break;
  }
  return std::nullopt;
}

// Counted in the engine's lookahead: it holds pinned blocks or a slot.
constexpr std::size_t lookahead_count(PartPhase p) noexcept {
  return p == PartPhase::preparing || p == PartPhase::ready || p == PartPhase::streaming ||
                 p == PartPhase::running || p == PartPhase::finishing
             ? 1
             : 0;
}

// What of the partition is still under way: its producer, its slot or its
// host copies. The job completes only when every partition counts 0.
constexpr std::size_t active_count(PartPhase p) noexcept {
  switch (p) {
    case PartPhase::preparing:
    case PartPhase::running:
    case PartPhase::finishing:
      return 1;
    case PartPhase::streaming:
      return 2;
    default:
      return 0;
  }
}

constexpr const char* to_string(PartPhase p) noexcept {
  constexpr const char* names[] = {"queued",  "preparing", "ready", "streaming",
                                   "running", "finishing", "done",  "dropped"};
  return names[static_cast<int>(p)];
}

constexpr const char* to_string(PartEvent e) noexcept {
  constexpr const char* names[] = {"prepare",   "produced",    "production_failed", "dispatched",
                                   "withdrawn", "device_done", "abandoned",         "finished"};
  return names[static_cast<int>(e)];
}

// Moves `phase` by `event` and the two counts with it. An event that cannot
// happen in the phase is a bug in the engine: the counts would be wrong
// from then on (a job that never completes), so it ends the process,
// naming the phase and the event.
inline void advance(PartPhase& phase, PartEvent event, std::size_t& lookahead,
                    std::size_t& active) noexcept {
  const auto next = next_phase(phase, event);
  if (!next) {
    std::fprintf(stderr, "stoker engine bug: partition event '%s' in phase '%s'\n",
                 to_string(event), to_string(phase));
    std::terminate();
  }
  lookahead = lookahead - lookahead_count(phase) + lookahead_count(*next);
  active = active - active_count(phase) + active_count(*next);
  phase = *next;
}

}  // namespace stoker::engine::detail
