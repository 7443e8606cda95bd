// The host copy that fills a staging chunk from a pageable input.
#pragma once

#include <cstddef>

namespace stoker::engine::detail {

// Copies `bytes` from `src` (any alignment) to `dst`. Under host memory
// load a plain memcpy from 4 KiB pages is bound by memory latency: the
// hardware prefetchers stop at every page boundary. Where AVX-512 exists
// and `dst` is 64-byte aligned, this prefetches the source several pages
// ahead and writes with non-temporal stores (the chunk is read next by
// DMA, not by this core); elsewhere it is memcpy.
void staging_copy(std::byte* dst, const std::byte* src, std::size_t bytes) noexcept;

// Which copy staging_copy uses, for the A/B measurement of the two:
// STOKER_STAGING_COPY=memcpy forces memcpy (read once, at first use).
bool staging_copy_prefetches() noexcept;

}  // namespace stoker::engine::detail
