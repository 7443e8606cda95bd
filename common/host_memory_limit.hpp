// HostMemoryLimit: the most host memory this process may take and what sets
// it, so that a message about memory names the limit beside the need ("2^27
// elements need 8589934592 bytes (8.0 GiB) of host memory; the
// address-space limit (ulimit -v) is 2048000000 bytes (1.9 GiB)").
//
// The limit is the smallest of the process's address-space limit
// (RLIMIT_AS, `ulimit -v`), its data-segment limit (RLIMIT_DATA, `ulimit
// -d`; on Linux it bounds heap and anonymous mappings alike) and the
// machine's physical memory. It is an upper bound, not what is free: code,
// thread stacks and earlier allocations already take part of it, so a need
// below it may still be refused, while a need above it never fits. A
// caller that knows a size checks it up front with check_host_memory and
// turns an allocation the system refused anyway (std::bad_alloc, a null
// pointer) into host_memory_refused's Error.
//
// Thread safety: every function reads the limits afresh and may be called
// from any thread. Nothing throws but std::bad_alloc from building a
// message.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/error.hpp"

namespace stoker::common {

// Held by every message of host_memory_refused: how a caller (`stoker
// stress`) tells an allocation the system refused, which is the machine's
// doing, from a budget's refusal, which is the engine's own logic.
inline constexpr std::string_view kRefusedBySystem = "the system refused";

// The bytes the process maps now (what RLIMIT_AS counts), from
// /proc/self/statm; 0 where it cannot be read.
std::size_t mapped_bytes();

struct HostMemoryLimit {
  enum class Source {
    unknown,        // no limit and no figure for physical memory
    address_space,  // RLIMIT_AS
    data_segment,   // RLIMIT_DATA
    physical,       // the machine's memory
  };
  std::size_t bytes = 0;  // 0 with Source::unknown
  Source source = Source::unknown;

  // The limit now.
  static HostMemoryLimit current();
  // What the process takes of an address-space or data limit now (its
  // mapped size, or its data and stack); 0 for the others.
  std::size_t in_use() const;
  // "the address-space limit (ulimit -v) is 2048000000 bytes (1.9 GiB)",
  // "this machine has 25271259136 bytes (23.5 GiB) of memory", or "the
  // host's memory limit is unknown".
  std::string describe() const;
};

// Errc::out_of_host_memory, "<what> needs <bytes> of host memory; <limit>",
// when `bytes` is above the limit; no error otherwise (an unknown limit
// lets everything through).
Error check_host_memory(std::string_view what, std::size_t bytes);

// The error for an allocation of `bytes` for `what` that the system
// refused: Errc::out_of_host_memory, "<what>: the system refused <bytes> of
// host memory; <limit>", and for an address-space or data limit how much of
// it the process already uses.
Error host_memory_refused(std::string_view what, std::size_t bytes);
// The same where the size is not known (a std::bad_alloc from deep inside):
// "<what>: the system refused host memory; <limit>".
Error host_memory_refused(std::string_view what);

// For a thread whose work cannot be unwound when an allocation fails (an
// engine thread in the middle of a job's bookkeeping): ends the process as
// std::terminate would, after one line on stderr that says which thread
// (`what`) and the limit, instead of "terminate called after throwing an
// instance of 'std::bad_alloc'": "stoker: thread stoker-wait-0 (the
// device's waiter): the system refused host memory; <limit>; it cannot go
// on".
[[noreturn]] void abort_out_of_host_memory(std::string_view what) noexcept;

}  // namespace stoker::common
