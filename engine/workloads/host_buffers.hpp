// Caller-owned host buffers that a workload page-locks once for DMA, as a
// prover does with buffers it reuses (hpoly's h, the synthetic workload's
// registered inputs).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "devices/pinned_buffer.hpp"

namespace stoker::engine::workloads {

struct FreeDeleter {
  void operator()(void* p) const noexcept;
};
// From allocate_pages: page-aligned and whole pages long, so that no other
// allocation shares a page of it (CUDA will not register a page twice).
template <typename T>
using PageBuffer = std::unique_ptr<T[], FreeDeleter>;

// `bytes` rounded up to whole pages, page-aligned; null when out of memory.
void* allocate_pages(std::size_t bytes);

// For p < count, on up to 4 threads (cudaHostRegister runs at ~19 GB/s on
// one thread and ~27 on four, and no faster on more; docs/ENGINE.md):
// prepare(p) returns buffer p, after filling it if it likes, and the first
// `bytes` of it are page-locked for `backend`'s DMA. Appends the
// registrations to `out` in order; on a failure appends none and returns
// "<what> of partition <p>: <why>".
Error register_each(devices::Backend backend, std::size_t count, std::size_t bytes,
                    const std::function<void*(std::size_t)>& prepare,
                    std::vector<devices::HostRegistration>& out, const std::string& what);

}  // namespace stoker::engine::workloads
