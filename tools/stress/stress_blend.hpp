// The stress tool's own workload, "blend": out[i] mixes input a[i], input
// b[i] (or a constant when the partition has one input), i and a per-job
// salt. The CPU and GPU versions share their arithmetic (mix_words.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <system_error>

namespace stoker::tools::stress {

std::uint32_t blend_input_word(std::uint64_t job, std::size_t partition, std::size_t input,
                               std::size_t index);
void blend_cpu(const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* out,
               std::size_t words, std::uint32_t salt, int rounds);
// Enqueues on `cuda_stream`; fills `scratch` (device memory) as the CPU
// version does, so that a wrong scratch size shows up under the sanitizers.
std::error_code blend_gpu(const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* out,
                          std::size_t words, std::uint32_t salt, int rounds, void* scratch,
                          std::size_t scratch_bytes, void* cuda_stream);

}  // namespace stoker::tools::stress
