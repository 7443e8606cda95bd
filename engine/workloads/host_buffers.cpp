#include "engine/workloads/host_buffers.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>

#include "common/start_thread.hpp"

namespace stoker::engine::workloads {

void FreeDeleter::operator()(void* p) const noexcept {
  std::free(p);
}

void* allocate_pages(std::size_t bytes) {
  static const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return std::aligned_alloc(page, (bytes + page - 1) / page * page);
}

Error register_each(devices::Backend backend, std::size_t count, std::size_t bytes,
                    const std::function<void*(std::size_t)>& prepare,
                    std::vector<devices::HostRegistration>& out, const std::string& what) {
  std::vector<Result<devices::HostRegistration>> got;
  got.reserve(count);
  for (std::size_t p = 0; p < count; ++p) got.emplace_back(Error{Errc::cancelled, "not attempted"});
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t p; (p = next.fetch_add(1)) < count;)
      got[p] = devices::register_host(backend, prepare(p), bytes);
  };
  // Helpers only share the work: where the system refuses one, fewer do it.
  std::vector<std::thread> helpers;
  for (std::size_t t = 1; t < std::min<std::size_t>(4, count); ++t) {
    std::thread helper;
    if (common::start_thread(helper, "a registering thread", work)) break;
    helpers.push_back(std::move(helper));
  }
  work();
  for (auto& t : helpers) t.join();
  for (std::size_t p = 0; p < count; ++p)
    if (!got[p])
      return Error{got[p].error().code,
                   what + " of partition " + std::to_string(p) + ": " + got[p].error().what()};
  for (auto& r : got) out.push_back(std::move(*r));
  return {};
}

}  // namespace stoker::engine::workloads
