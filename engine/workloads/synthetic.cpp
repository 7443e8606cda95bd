#include "engine/workloads/synthetic.hpp"

#include <algorithm>
#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "common/splitmix64.hpp"
#include "engine/engine.hpp"
#include "engine/workloads/mix_words.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define STOKER_SYNTHETIC_LANES 1
#include <immintrin.h>
#endif

namespace stoker::engine::workloads {

#if defined(STOKER_SYNTHETIC_LANES)
namespace {

bool lanes_supported() {
  static const bool supported =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  return supported;
}

// GCC 12's avx512fintrin.h trips -W(maybe-)uninitialized where its shifts
// are inlined (GCC bug 105593, the headers' undefined-vector idiom).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// Word pairs p0 .. p0 + pairs - 1, i.e. splitmix64(key ^ p), eight at a
// time in AVX-512 lanes (common::splitmix64's steps and constants), with
// 64-byte non-temporal stores; `out` 64-byte aligned, `pairs` a multiple of
// eight. The scalar loop took 2.5-3 ns per
// pair on the H200 host and bounded copy-bound jobs at ~40 GB/s on 16
// cores; one lane pass is 4-5x faster per thread (development host).
__attribute__((target("avx512f,avx512dq"))) void fill_pairs_lanes(std::uint64_t key,
                                                                  std::uint64_t p0,
                                                                  std::uint64_t* out,
                                                                  std::size_t pairs) {
  const __m512i k = _mm512_set1_epi64(static_cast<long long>(key));
  const __m512i golden = _mm512_set1_epi64(static_cast<long long>(common::kSplitmix64Gamma));
  const __m512i m1 = _mm512_set1_epi64(static_cast<long long>(common::kSplitmix64Mul1));
  const __m512i m2 = _mm512_set1_epi64(static_cast<long long>(common::kSplitmix64Mul2));
  const __m512i eight = _mm512_set1_epi64(8);
  __m512i index = _mm512_add_epi64(_mm512_set1_epi64(static_cast<long long>(p0)),
                                   _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0));
  for (std::size_t j = 0; j < pairs; j += 8) {
    __m512i v = _mm512_add_epi64(_mm512_xor_si512(k, index), golden);
    v = _mm512_mullo_epi64(_mm512_xor_si512(v, _mm512_srli_epi64(v, 30)), m1);
    v = _mm512_mullo_epi64(_mm512_xor_si512(v, _mm512_srli_epi64(v, 27)), m2);
    v = _mm512_xor_si512(v, _mm512_srli_epi64(v, 31));
    _mm512_stream_si512(reinterpret_cast<__m512i*>(out + j), v);
    index = _mm512_add_epi64(index, eight);
  }
}
#pragma GCC diagnostic pop

}  // namespace
#endif

// Word i is one half of splitmix64(key ^ i / 2): random access for the
// verifier, two words per hash for the producers.
std::uint32_t synthetic_input_word(std::uint64_t seed, std::size_t partition, std::size_t index) {
  const std::uint64_t v =
      common::splitmix64(seed * 0x100000001b3ull ^ (std::uint64_t{partition} << 40) ^ (index / 2));
  return static_cast<std::uint32_t>(index % 2 ? v >> 32 : v);
}

void synthetic_fill(std::uint64_t seed, std::size_t partition, std::span<std::uint32_t> out,
                    std::size_t first) {
  const std::uint64_t key = seed * 0x100000001b3ull ^ (std::uint64_t{partition} << 40);
  std::size_t i = 0;
  if (first % 2 && !out.empty()) out[i++] = synthetic_input_word(seed, partition, first);
#if defined(__SSE2__)
  // Non-temporal stores where the words are 8-byte aligned: a producer
  // writes far more than any cache holds, and plain stores would first read
  // every line they fill (read-for-ownership), doubling the host memory
  // traffic that producers and the DMA engines share.
  if (reinterpret_cast<std::uintptr_t>(out.data() + i) % 8 == 0) {
    const auto pair_store = [&] {
      const std::uint64_t v = common::splitmix64(key ^ ((first + i) / 2));
      _mm_stream_si64(reinterpret_cast<long long*>(out.data() + i), static_cast<long long>(v));
      i += 2;
    };
#if defined(STOKER_SYNTHETIC_LANES)
    if (lanes_supported()) {
      while (i + 1 < out.size() && reinterpret_cast<std::uintptr_t>(out.data() + i) % 64 != 0)
        pair_store();
      const std::size_t pairs = (out.size() - i) / 2 / 8 * 8;
      fill_pairs_lanes(key, (first + i) / 2, reinterpret_cast<std::uint64_t*>(out.data() + i),
                       pairs);
      i += 2 * pairs;
    }
#endif
    while (i + 1 < out.size()) pair_store();
    _mm_sfence();  // weakly ordered: visible before the partition is handed on
  }
#endif
  for (; i + 1 < out.size(); i += 2) {
    const std::uint64_t v = common::splitmix64(key ^ ((first + i) / 2));
    out[i] = static_cast<std::uint32_t>(v);
    out[i + 1] = static_cast<std::uint32_t>(v >> 32);
  }
  if (i < out.size()) out[i] = synthetic_input_word(seed, partition, first + i);
}

void synthetic_cpu(const std::uint32_t* in, std::uint32_t* out, std::size_t out_words, int rounds) {
  for (std::size_t i = 0; i < out_words; ++i)
    out[i] = detail::mix_words(in[4 * i], in[4 * i + 1], in[4 * i + 2], in[4 * i + 3], rounds);
}

namespace {

// One page-aligned buffer of `bytes` per partition, appended to `out`;
// `what` ("input", "output") names it in the error.
Error allocate_page_buffers(std::size_t partitions, std::size_t bytes, const char* what,
                            std::vector<PageBuffer<std::uint32_t>>& out) {
  for (std::size_t p = 0; p < partitions; ++p) {
    auto* mem = static_cast<std::uint32_t*>(allocate_pages(bytes));
    if (mem == nullptr)
      return Error{Errc::out_of_host_memory, std::string("synthetic: no memory for the ") + what +
                                                 " of partition " + std::to_string(p) + " (" +
                                                 std::to_string(bytes) + " bytes)"};
    out.emplace_back(mem);
  }
  return {};
}

// Every partition's input in its own page-aligned allocation, generated and
// page-locked on up to 4 threads (registering costs ~0.04 s/GiB, filling
// about as much on one thread).
Error fill_registered_inputs(devices::Backend backend, SyntheticRun& run) {
  const auto& o = run.options;
  if (auto e = allocate_page_buffers(o.partitions, o.input_bytes, "input", run.registered_inputs))
    return e;
  const auto fill = [&](std::size_t p) {
    synthetic_fill(o.seed, p, std::span(run.registered_inputs[p].get(), o.input_bytes / 4));
    return static_cast<void*>(run.registered_inputs[p].get());
  };
  return register_each(backend, o.partitions, o.input_bytes, fill, run.input_registrations,
                       "synthetic: page-locking the input");
}

// Every partition's output in page buffers page-locked for the D2H.
Error register_outputs(devices::Backend backend, std::size_t out_words, SyntheticRun& run) {
  const auto& o = run.options;
  const std::size_t bytes = out_words * sizeof(std::uint32_t);
  if (auto e = allocate_page_buffers(o.partitions, bytes, "output", run.registered_output_storage))
    return e;
  for (auto& buf : run.registered_output_storage) run.outputs.emplace_back(buf.get(), out_words);
  const auto prepare = [&](std::size_t p) {
    std::fill(run.outputs[p].begin(), run.outputs[p].end(), 0u);  // touched before pinning
    return static_cast<void*>(run.outputs[p].data());
  };
  return register_each(backend, o.partitions, bytes, prepare, run.output_registrations,
                       "synthetic: page-locking the output");
}

// The job's shape against o.limits, before anything is allocated.
Error check_synthetic_limits(const SyntheticOptions& o) {
  const bool produced = !o.pageable && !o.registered_inputs;
  const std::size_t out_bytes = o.input_bytes / 4;
  Partition shape;
  shape.inputs.push_back(produced ? Input::produced(o.input_bytes)
                                  : Input{InputKind::pageable, nullptr, o.input_bytes, nullptr});
  shape.outputs.push_back(Output{nullptr, out_bytes, o.registered_outputs.has_value()});
  BuildNeeds needs;
  needs.workload = "synthetic";
  needs.partitions = o.partitions;
  needs.caller_bytes = out_bytes + (produced ? 0 : o.input_bytes) + kPartitionBookkeepingBytes;
  needs.pinned_bytes = Engine::pinned_bytes(shape);
  return check_build(needs, o.limits);
}

Result<Job> build_synthetic_job(const SyntheticOptions& o, std::shared_ptr<SyntheticRun>& run) {
  if (o.partitions == 0)
    return Error{Errc::invalid_argument, "synthetic job needs at least one partition"};
  if (o.input_bytes == 0 || o.input_bytes % 16 != 0)
    return Error{Errc::invalid_argument,
                 "synthetic partition size must be a positive multiple of 16 bytes, not " +
                     std::to_string(o.input_bytes)};
  if (o.rounds < 0 || o.rounds > 100000)
    return Error{Errc::invalid_argument,
                 "synthetic rounds must be 0..100000, not " + std::to_string(o.rounds)};
  if (o.pageable && o.registered_inputs)
    return Error{Errc::invalid_argument,
                 "synthetic inputs are either pageable or registered, not both"};
  if (auto e = check_synthetic_limits(o)) return e;
  run = std::make_shared<SyntheticRun>();
  run->options = o;
  const std::size_t in_words = o.input_bytes / 4, out_words = in_words / 4;
  run->checksums.assign(o.partitions, 0);
  if (o.registered_inputs)
    if (auto e = fill_registered_inputs(*o.registered_inputs, *run)) return e;
  if (o.registered_outputs) {
    if (auto e = register_outputs(*o.registered_outputs, out_words, *run)) return e;
  } else {
    run->output_storage.assign(o.partitions, std::vector<std::uint32_t>(out_words));
    for (auto& out : run->output_storage) run->outputs.emplace_back(out);
  }
  if (o.pageable) {
    run->pageable_inputs.resize(o.partitions);
    for (std::size_t p = 0; p < o.partitions; ++p) {
      run->pageable_inputs[p].resize(in_words);
      synthetic_fill(o.seed, p, run->pageable_inputs[p]);
    }
  }

  Job job;
  job.name = o.name;
  job.priority = o.priority;
  const int rounds = o.rounds;
  for (std::size_t p = 0; p < o.partitions; ++p) {
    Partition part;
    if (o.pageable) {
      part.inputs.push_back(Input::pageable(std::as_bytes(std::span(run->pageable_inputs[p]))));
    } else if (o.registered_inputs) {
      part.inputs.push_back(Input::registered(
          std::as_bytes(std::span(run->registered_inputs[p].get(), o.input_bytes / 4))));
    } else {
      // The synthesis stand-in: generate straight into the pinned block.
      part.inputs.push_back(Input::produced(o.input_bytes));
      // Split: each share generates its own range of words in parallel.
      part.split_producer = [seed = o.seed, p](std::span<const std::span<std::byte>> produced,
                                               ProducerTask task) {
        auto words =
            std::span(reinterpret_cast<std::uint32_t*>(produced[0].data()), produced[0].size() / 4);
        const auto [begin, end] = task.range(words.size(), 2);
        synthetic_fill(seed, p, words.subspan(begin, end - begin), begin);
        return std::error_code{};
      };
      // Words task.range(words, 2) are bytes range(bytes, 8): each share
      // may be copied to the device as soon as it has ended.
      part.share_align = 2 * sizeof(std::uint32_t);
    }
    part.outputs.push_back(Output::to(std::as_writable_bytes(run->outputs[p]),
                                      /*is_pinned=*/o.registered_outputs.has_value()));
    part.work.gpu = [rounds](const KernelContext& c) {
      return synthetic_gpu(reinterpret_cast<const std::uint32_t*>(c.inputs[0]),
                           reinterpret_cast<std::uint32_t*>(c.outputs[0]), c.output_bytes[0] / 4,
                           rounds, c.stream.native());
    };
    part.work.cpu = [rounds](const KernelContext& c) {
      synthetic_cpu(reinterpret_cast<const std::uint32_t*>(c.inputs[0]),
                    reinterpret_cast<std::uint32_t*>(c.outputs[0]), c.output_bytes[0] / 4, rounds);
      return std::error_code{};
    };
    part.label = o.name + "#" + std::to_string(p);
    job.partitions.push_back(std::move(part));
  }
  // The kernels read one input and write a quarter of its words: a
  // partition edited out of that shape would read past its input.
  job.validate = [](const Partition& part, std::size_t) -> Error {
    if (part.inputs.size() != 1 || part.outputs.size() != 1)
      return {Errc::invalid_argument, "a synthetic partition has one input and one output, not " +
                                          std::to_string(part.inputs.size()) + " and " +
                                          std::to_string(part.outputs.size())};
    const std::size_t in = part.inputs[0].bytes, out = part.outputs[0].bytes;
    if (in % 16 != 0 || out != in / 4)
      return {Errc::invalid_argument,
              "synthetic output must be a quarter of its input, a multiple of 16 bytes (input " +
                  std::to_string(in) + " bytes, output " + std::to_string(out) + ")"};
    return {};
  };
  // Checks the output against the CPU version, regenerating the inputs from
  // the seed: every word where that is cheap (up to 2^24 word-rounds, about
  // 0.1 s), else 4096 words spread over the output, at an offset that
  // differs between partitions. Then sums the whole output.
  job.verify = [run_ptr = run, seed = o.seed, rounds](const Partition& part, std::size_t p) {
    const auto out = run_ptr->outputs[p].first(part.outputs[0].bytes / sizeof(std::uint32_t));
    const bool whole =
        out.size() <= (std::size_t{1} << 24) / (static_cast<std::size_t>(rounds) + 1);
    const std::size_t stride = whole ? 1 : std::max<std::size_t>(1, out.size() / 4096);
    for (std::size_t i = p % stride; i < out.size(); i += stride) {
      std::uint32_t in[4];
      for (int k = 0; k < 4; ++k) in[k] = synthetic_input_word(seed, p, 4 * i + k);
      std::uint32_t expect;
      synthetic_cpu(in, &expect, 1, rounds);
      if (out[i] != expect) return make_error_code(Errc::verification_failed);
    }
    std::uint64_t sum = 0;
    for (auto w : out) sum = sum * 31 + w;
    run_ptr->checksums[p] = sum;
    return std::error_code{};
  };
  return job;
}

}  // namespace

Result<Job> make_synthetic_job(const SyntheticOptions& o, std::shared_ptr<SyntheticRun>& run) {
  run.reset();
  auto job = guarded_build<Job>("synthetic", [&] { return build_synthetic_job(o, run); });
  if (!job) run.reset();  // nothing half-built stays allocated
  return job;
}

}  // namespace stoker::engine::workloads
