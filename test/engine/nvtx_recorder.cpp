// The weak InitializeInjectionNvtx2_fnptr of the NVTX headers is left out
// here (NVTX_STATIC_INJECTION_IMPL) so that this file's definition is the
// only strong one: NVTX then attaches this recorder at its first call.
#include "test/engine/nvtx_recorder.hpp"

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <utility>

// Declared ahead of the headers, which use it (spelled out: its type,
// NvtxInitializeInjectionNvtxFunc_t, comes with them).
extern "C" int (*InitializeInjectionNvtx2_fnptr)(const void* (*)(std::uint32_t));
#define NVTX_STATIC_INJECTION_IMPL
#include <nvtx3/nvToolsExt.h>

namespace stoker::test::nvtx_recorder {
namespace {

std::mutex mutex;
std::vector<Event> events;
std::deque<std::string> strings;  // registered strings and domain names: stable addresses
std::atomic<bool> is_attached{false};
std::atomic<std::uint64_t> next_id{1};
thread_local int depth = 0;

const std::string* keep(const char* s) {
  std::lock_guard lock(mutex);
  return &strings.emplace_back(s);
}

std::string name_of(const nvtxEventAttributes_t* a) {
  if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED)
    return a->message.registered ? *reinterpret_cast<const std::string*>(a->message.registered)
                                 : std::string("<null handle>");
  if (a->messageType == NVTX_MESSAGE_TYPE_ASCII) return a->message.ascii;
  return "<other message type>";
}

std::string domain_of(nvtxDomainHandle_t d) {
  return d ? *reinterpret_cast<const std::string*>(d) : std::string();
}

void record(Event e) {
  std::lock_guard lock(mutex);
  events.push_back(std::move(e));
}

nvtxDomainHandle_t NVTX_API domain_create(const char* name) {
  return reinterpret_cast<nvtxDomainHandle_t>(const_cast<std::string*>(keep(name)));
}
void NVTX_API domain_destroy(nvtxDomainHandle_t) {}
nvtxStringHandle_t NVTX_API register_string(nvtxDomainHandle_t, const char* s) {
  return reinterpret_cast<nvtxStringHandle_t>(const_cast<std::string*>(keep(s)));
}
int NVTX_API push(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  record({Event::push, std::this_thread::get_id(), domain_of(d), name_of(a), a->payload.ullValue});
  return depth++;
}
int NVTX_API pop(nvtxDomainHandle_t d) {
  record({Event::pop, std::this_thread::get_id(), domain_of(d), {}, 0});
  return --depth;
}
nvtxRangeId_t NVTX_API start(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  const auto id = next_id.fetch_add(1);
  record({Event::start, std::this_thread::get_id(), domain_of(d), name_of(a), a->payload.ullValue,
          id});
  return id;
}
void NVTX_API end(nvtxDomainHandle_t d, nvtxRangeId_t id) {
  record({Event::end, std::this_thread::get_id(), domain_of(d), {}, 0, id});
}

int NVTX_API initialize(NvtxGetExportTableFunc_t get_table) {
  const auto* callbacks =
      static_cast<const NvtxExportTableCallbacks*>(get_table(NVTX_ETID_CALLBACKS));
  NvtxFunctionTable table = nullptr;
  unsigned size = 0;
  if (!callbacks || !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size))
    return 0;
  const auto set = [&](unsigned id, auto fn) {
    if (id < size) *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
  };
  set(NVTX_CBID_CORE2_DomainCreateA, &domain_create);
  set(NVTX_CBID_CORE2_DomainDestroy, &domain_destroy);
  set(NVTX_CBID_CORE2_DomainRegisterStringA, &register_string);
  set(NVTX_CBID_CORE2_DomainRangePushEx, &push);
  set(NVTX_CBID_CORE2_DomainRangePop, &pop);
  set(NVTX_CBID_CORE2_DomainRangeStartEx, &start);
  set(NVTX_CBID_CORE2_DomainRangeEnd, &end);
  is_attached = true;
  return 1;
}

}  // namespace

bool attached() {
  return is_attached;
}

std::vector<Event> take() {
  std::lock_guard lock(mutex);
  return std::exchange(events, {});
}

}  // namespace stoker::test::nvtx_recorder

extern "C" NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr =
    &stoker::test::nvtx_recorder::initialize;
