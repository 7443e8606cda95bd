// NVTX ranges for the engine's stages, so that a timeline taken with Nsight
// Systems (`nsys profile --trace=cuda,nvtx,osrt`) shows by name what each
// engine thread does: per job, per partition, and per stage (producer,
// staging, h2d, kernels, d2h), in the domain "stoker".
//
// - ScopedRange: a push/pop range on the calling thread, for work that
//   starts and ends there (a producer's share, a staging task, the feeder's
//   H2D enqueue, the launcher's kernel and D2H enqueue, a CPU kernel on the
//   host backend); ranges opened inside it nest under it.
// - Span: a start/end range that may end on another thread, for a job (from
//   submission to completion) and a partition (from dispatch to the end of
//   its last copy); it ends when destroyed.
// Each carries the partition index (or job number) as its payload.
//
// Cost when no tool listens: NVTX3 is header-only; every call reads a
// function pointer that stays null unless an injection library (nsys,
// ncu) attached at the first call, and returns. The domain and the stage
// names are registered once per process (names()), never per call, so a
// range costs filling a 48-byte struct and that check.
#pragma once

#include <nvtx3/nvToolsExt.h>

#include <cstdint>
#include <utility>

namespace stoker::engine::detail::nvtx {

enum class Stage : unsigned { job, partition, producer, staging, h2d, kernels, d2h, count };

struct Names {
  nvtxDomainHandle_t domain = nullptr;
  nvtxStringHandle_t stage[static_cast<unsigned>(Stage::count)] = {};
};

// Registered at the first range of the process (null handles without a tool).
inline const Names& names() noexcept {
  static const Names n = [] {
    Names r;
    r.domain = nvtxDomainCreateA("stoker");
    const char* const stage[] = {"job", "partition", "producer", "staging",
                                 "h2d", "kernels",   "d2h"};
    for (unsigned s = 0; s < static_cast<unsigned>(Stage::count); ++s)
      r.stage[s] = nvtxDomainRegisterStringA(r.domain, stage[s]);
    return r;
  }();
  return n;
}

// The stage's registered name (or `label`, copied by the tool, when given),
// its colour, and `index` as the payload.
inline nvtxEventAttributes_t attributes(Stage stage, std::uint64_t index,
                                        const char* label = nullptr) noexcept {
  // One colour per stage, alike across runs: ARGB.
  static constexpr std::uint32_t kColour[] = {0xff607d8b, 0xff9e9e9e, 0xff8bc34a, 0xffffc107,
                                              0xff2196f3, 0xff4caf50, 0xff9c27b0};
  const auto s = static_cast<unsigned>(stage);
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.category = s + 1;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = kColour[s];
  a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
  a.payload.ullValue = index;
  if (label != nullptr && label[0] != '\0') {
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = label;
  } else {
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = names().stage[s];
  }
  return a;
}

class ScopedRange {
 public:
  ScopedRange(Stage stage, std::uint64_t index) noexcept {
    const auto a = attributes(stage, index);
    level_ = nvtxDomainRangePushEx(names().domain, &a);
  }
  ~ScopedRange() { nvtxDomainRangePop(names().domain); }
  ScopedRange(const ScopedRange&) = delete;
  ScopedRange& operator=(const ScopedRange&) = delete;
  // The nesting level the tool reports (0 for the outermost), or
  // NVTX_NO_PUSH_POP_TRACKING (-2) when no tool listens.
  int level() const noexcept { return level_; }

 private:
  int level_ = NVTX_NO_PUSH_POP_TRACKING;
};

class Span {
 public:
  Span() noexcept = default;
  Span(Stage stage, std::uint64_t index, const char* label = nullptr) noexcept : open_(true) {
    const auto a = attributes(stage, index, label);
    id_ = nvtxDomainRangeStartEx(names().domain, &a);
  }
  Span(Span&& o) noexcept : id_(o.id_), open_(std::exchange(o.open_, false)) {}
  Span& operator=(Span&& o) noexcept {
    if (this != &o) {
      end();
      id_ = o.id_;
      open_ = std::exchange(o.open_, false);
    }
    return *this;
  }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;
  ~Span() { end(); }
  void end() noexcept {
    if (std::exchange(open_, false)) nvtxDomainRangeEnd(names().domain, id_);
  }

 private:
  nvtxRangeId_t id_ = 0;
  bool open_ = false;
};

}  // namespace stoker::engine::detail::nvtx
