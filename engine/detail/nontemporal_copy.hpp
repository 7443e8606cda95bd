// The engine's bulk host copies: a staging chunk filled from a pageable
// input, and an output's bounce block copied into its pageable destination.
#pragma once

#include <cstddef>

namespace stoker::engine::detail {

// Copies `bytes` from `src` (any alignment) to `dst`. Under host memory
// load a plain memcpy from 4 KiB pages is bound by memory latency: the
// hardware prefetchers stop at every page boundary. Where AVX-512 exists
// (and the copy spans a few lines), this prefetches the source several
// pages ahead and writes whole 64-byte lines of `dst` with non-temporal
// stores, which skip reading each line first: the bytes are read next by
// DMA or, for the bounce copies of outputs, later by the caller, not by
// this core; elsewhere it is memcpy.
void nontemporal_copy(std::byte* dst, const std::byte* src, std::size_t bytes) noexcept;

// Whether nontemporal_copy streams (prefetch ahead, non-temporal stores)
// rather than calling memcpy, for the A/B measurement of the two:
// STOKER_STAGING_COPY=memcpy forces memcpy for both kinds of copy (read
// once, at first use).
bool nontemporal_copy_streams() noexcept;

}  // namespace stoker::engine::detail
