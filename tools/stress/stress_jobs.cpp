#include "tools/stress/stress_jobs.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "engine/engine.hpp"
#include "engine/workloads/mix_words.hpp"

namespace stoker::tools::stress {

using engine::Input;
using engine::InputKind;
using engine::KernelContext;
using engine::Output;
using engine::workloads::detail::mix_words;
using engine::workloads::detail::splitmix64;

namespace {

constexpr std::uint32_t kNoSecondInput = 0x5bd1e995u;

const char* kind_name(InputKind k) {
  switch (k) {
    case InputKind::pinned:
      return "pinned";
    case InputKind::registered:
      return "registered";
    case InputKind::pageable:
      return "pageable";
    case InputKind::produced:
      return "produced";
  }
  return "?";
}

std::size_t round_up(std::size_t n, std::size_t to) {
  return (n + to - 1) / to * to;
}

// Input word counts: mostly small, sometimes up to the limit; multiples of 4.
std::size_t draw_words(Rng& rng, std::size_t max_bytes) {
  const std::size_t max_words = std::max<std::size_t>(16, max_bytes / 4) / 4 * 4;
  const std::size_t cap = rng.chance(0.5) ? std::min<std::size_t>(max_words, 1024) : max_words;
  return std::min(max_words, round_up(16 + rng.below(cap - 15), 4));
}

}  // namespace

namespace {
// Faults that need the partition to have a producer of its own.
bool producer_fault(Fault f) noexcept {
  return f == Fault::producer_error || f == Fault::producer_throws;
}
}  // namespace

const char* fault_name(Fault f) noexcept {
  switch (f) {
    case Fault::none:
      return "none";
    case Fault::empty_input:
      return "empty_input";
    case Fault::mismatched_sizes:
      return "mismatched_sizes";
    case Fault::bad_device:
      return "bad_device";
    case Fault::too_big_for_device:
      return "too_big_for_device";
    case Fault::too_big_for_host:
      return "too_big_for_host";
    case Fault::kernel_error:
      return "kernel_error";
    case Fault::producer_error:
      return "producer_error";
    case Fault::verify_error:
      return "verify_error";
    case Fault::producer_throws:
      return "producer_throws";
    case Fault::verify_throws:
      return "verify_throws";
  }
  return "?";
}

const char* workload_name(Workload w) noexcept {
  switch (w) {
    case Workload::synthetic:
      return "synthetic";
    case Workload::blend:
      return "blend";
    case Workload::ntt_msm_h:
      return "ntt_msm_h";
  }
  return "?";
}

unsigned stress_ntt_max_log_n(devices::Backend backend, std::size_t max_partition_bytes) {
  unsigned log_n = backend == devices::Backend::cuda ? kStressNttMaxLogNGpu : kStressNttMaxLogNHost;
  while (log_n >= kStressNttMinLogN &&
         (std::size_t{1} << log_n) * sizeof(kernels::Fr) > max_partition_bytes)
    --log_n;
  return log_n >= kStressNttMinLogN ? log_n : 0;
}

const char* token_name(Token t) noexcept {
  switch (t) {
    case Token::callback:
      return "callback";
    case Token::future:
      return "use_future";
    case Token::awaitable:
      return "use_awaitable";
    case Token::deferred:
      return "deferred";
  }
  return "?";
}

std::uint64_t Rng::next() {
  s_ += 0x9e3779b97f4a7c15ull;
  return splitmix64(s_);
}

std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
  return splitmix64(splitmix64(seed ^ 0x5354524553530000ull) ^ splitmix64(a) * 31 ^ b);
}

std::string JobSpec::name() const {
  // Appended piece by piece, here and in describe(): GCC 12 warns
  // (-Wrestrict, falsely) on a literal + std::to_string(...).
  std::string n = "r";
  n += std::to_string(round);
  n += ".s";
  n += std::to_string(submitter);
  n += ".j";
  n += std::to_string(index);
  return n;
}

std::string JobSpec::describe() const {
  std::string s = "job " + name() + " (id " + std::to_string(id) + "): ";
  switch (workload) {
    case Workload::synthetic:
      s += "synthetic, " + std::to_string(partitions) + " x " + std::to_string(synthetic_bytes) +
           " bytes " +
           (synthetic_pageable   ? "pageable"
            : synthetic_streamed ? "produced, streamed"
                                 : "produced");
      break;
    case Workload::blend:
      s += "blend, " + std::to_string(partitions) + " partitions [";
      break;
    case Workload::ntt_msm_h:
      s += "ntt_msm_h, " + std::to_string(partitions) + " x 2^" + std::to_string(ntt_log_n);
      break;
  }
  if (workload == Workload::blend) {
    for (std::size_t p = 0; p < parts.size(); ++p) {
      s += p ? "; " : "";
      s += std::to_string(parts[p].words * 4) + " B:";
      for (auto k : parts[p].inputs) s += std::string(" ") + kind_name(k);
      s += parts[p].pinned_output ? " -> pinned" : " -> pageable";
      if (parts[p].scratch_bytes) s += " +" + std::to_string(parts[p].scratch_bytes) + " scratch";
    }
    s += "]";
  }
  s += ", rounds " + std::to_string(mix_rounds) + ", priority " + std::to_string(priority);
  if (!affinity.empty()) {
    s += ", devices {";
    for (std::size_t i = 0; i < affinity.size(); ++i) {
      if (i) s += ',';
      s += std::to_string(affinity[i]);
    }
    s += "}";
  }
  s += std::string(", token ") + token_name(token) + (tuple ? " (as_tuple)" : "");
  if (fault == Fault::verify_error && workload == Workload::ntt_msm_h)
    s += ", fault verify_error (checked with another toy SRS's secret)";
  else if (fault != Fault::none)
    s += std::string(", fault ") + fault_name(fault) + " in partition " +
         std::to_string(fault_partition);
  if (cancel)
    s += ", cancelled after " + std::to_string(cancel_after_ms) + " ms (type " +
         std::to_string(static_cast<int>(cancel_type)) + ")";
  return s;
}

JobSpec make_spec(Rng& rng, const MixLimits& L, int round, int submitter, std::size_t index,
                  bool kernel_fault) {
  JobSpec j;
  j.id = mix_seed(rng.next(), static_cast<std::uint64_t>(round), index) >> 8;
  j.round = round;
  j.submitter = submitter;
  j.index = index;
  j.mix_rounds = static_cast<int>(rng.below(33));
  j.priority = static_cast<int>(rng.below(6)) - 2;
  j.token = static_cast<Token>(rng.below(kTokenKinds));
  j.tuple = rng.chance(0.5);
  j.partitions = 1 + rng.below(std::max<std::size_t>(1, L.max_partitions));
  if (rng.chance(0.3)) {
    for (std::size_t d = 0; d < L.devices; ++d)
      if (rng.chance(0.5)) j.affinity.push_back(static_cast<int>(d));
    if (j.affinity.empty()) j.affinity.push_back(static_cast<int>(rng.below(L.devices)));
  }

  if (kernel_fault) {
    j.fault = Fault::kernel_error;
  } else if (rng.chance(L.fault_rate)) {
    // Every kind but kernel_error, which the driver places itself.
    static constexpr Fault kinds[] = {
        Fault::empty_input,        Fault::mismatched_sizes, Fault::bad_device,
        Fault::too_big_for_device, Fault::too_big_for_host, Fault::producer_error,
        Fault::verify_error,       Fault::producer_throws,  Fault::verify_throws};
    j.fault = kinds[rng.below(std::size(kinds))];
  }
  j.fault_partition = rng.below(j.partitions);
  if (j.fault == Fault::kernel_error) {
    j.fault_device = static_cast<int>(rng.below(L.devices));
    j.affinity = {j.fault_device};
  }
  if (j.fault == Fault::bad_device) j.affinity = {0, static_cast<int>(L.devices + rng.below(3))};

  // The synthetic workload cannot express mismatched inputs; blend can do
  // all, ntt_msm_h too. Without ntt_msm_h in the mix no draw is spent on it.
  if (L.ntt_max_log_n >= kStressNttMinLogN && rng.chance(L.ntt_share))
    j.workload = Workload::ntt_msm_h;
  else
    j.workload = j.fault != Fault::mismatched_sizes && rng.chance(0.35) ? Workload::synthetic
                                                                        : Workload::blend;
  if (j.workload == Workload::ntt_msm_h) {
    // Mostly small: on the host backend the CPU runs every MSM.
    const unsigned top = rng.chance(0.5) ? std::min(L.ntt_max_log_n, 7u) : L.ntt_max_log_n;
    j.ntt_log_n = kStressNttMinLogN + static_cast<unsigned>(rng.below(top - kStressNttMinLogN + 1));
  } else if (j.workload == Workload::synthetic) {
    j.synthetic_pageable = !producer_fault(j.fault) && rng.chance(0.5);
    j.synthetic_bytes = round_up(draw_words(rng, L.max_partition_bytes) * 4, 16);
    j.synthetic_streamed = !j.synthetic_pageable && rng.chance(0.5);
  } else {
    for (std::size_t p = 0; p < j.partitions; ++p) {
      PartSpec ps;
      ps.words = draw_words(rng, L.max_partition_bytes);
      const std::size_t n_inputs =
          (j.fault == Fault::mismatched_sizes && p == j.fault_partition) ? 2 : 1 + rng.below(2);
      for (std::size_t k = 0; k < n_inputs; ++k)
        ps.inputs.push_back(static_cast<InputKind>(rng.below(4)));
      if (producer_fault(j.fault) && p == j.fault_partition) ps.inputs[0] = InputKind::produced;
      ps.pinned_output = rng.chance(0.3);
      ps.scratch_bytes = rng.chance(0.3) ? round_up(1 + rng.below(64 << 10), 4) : 0;
      j.parts.push_back(std::move(ps));
    }
  }
  // Cancellations only on jobs that would succeed, and not through
  // use_future: its completion runs on whatever thread the engine completes
  // it from, so there is no executor to emit the (not thread-safe) signal on.
  if (j.fault == Fault::none && j.token != Token::future && rng.chance(L.cancel_rate)) {
    j.cancel = true;
    j.cancel_after_ms = rng.unit() * L.max_cancel_delay_ms;
    // use_awaitable's coroutine lets only terminal cancellation through.
    static constexpr boost::asio::cancellation_type types[] = {
        boost::asio::cancellation_type::terminal, boost::asio::cancellation_type::partial,
        boost::asio::cancellation_type::total};
    j.cancel_type = j.token == Token::awaitable ? types[0] : types[rng.below(3)];
  }
  return j;
}

std::size_t pinned_demand(const engine::Job& job) {
  std::size_t n = 0;
  for (const auto& p : job.partitions) n += engine::Engine::pinned_bytes(p);
  return n;
}

void JobBuffers::Aligned::operator()(std::uint32_t* p) const noexcept {
  std::free(p);
}

std::uint32_t blend_input_word(std::uint64_t job, std::size_t partition, std::size_t input,
                               std::size_t index) {
  return static_cast<std::uint32_t>(splitmix64(job * 0x100000001b3ull ^
                                               (std::uint64_t{partition} << 40) ^
                                               (std::uint64_t{input} << 56) ^ index));
}

void blend_cpu(const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* out,
               std::size_t words, std::uint32_t salt, int rounds) {
  for (std::size_t i = 0; i < words; ++i)
    out[i] =
        mix_words(a[i], b ? b[i] : kNoSecondInput, static_cast<std::uint32_t>(i), salt, rounds);
}

Result<engine::Job> build_job(const JobSpec& s, devices::Backend backend, alloc::PinnedPool& pool,
                              JobBuffers& buf, const NttSrs* ntt) {
  engine::Job job;
  if (s.workload == Workload::ntt_msm_h) {
    if (ntt == nullptr || !ntt->srs || ntt->devices == nullptr)
      return Error{Errc::invalid_argument,
                   "building " + s.name() + ": ntt_msm_h needs the resident toy SRS"};
    if (s.ntt_log_n > ntt->log_n)
      return Error{Errc::invalid_argument,
                   "building " + s.name() + ": ntt_msm_h 2^" + std::to_string(s.ntt_log_n) +
                       " is larger than the toy SRS's 2^" + std::to_string(ntt->log_n)};
    engine::workloads::NttMsmHOptions o;
    o.partitions = s.partitions;
    o.log_n = s.ntt_log_n;
    o.seed = s.id;
    o.srs = ntt->srs;
    o.devices = ntt->devices;
    o.verify = true;
    o.secret = engine::workloads::toy_srs_secret(s.fault == Fault::verify_error ? kStressSrsSeed + 1
                                                                                 : kStressSrsSeed);
    // One thread each: the emulated devices and the workers already run
    // partitions side by side, and the CPU cost stays what the sizes say.
    o.cpu_threads = 1;
    o.verify_threads = 1;
    o.name = s.name();
    auto j = engine::workloads::make_ntt_msm_h_job(o, buf.ntt);
    if (!j) return Error{j.error().code, "building " + s.name() + ": " + j.error().what()};
    job = std::move(*j);
  } else if (s.workload == Workload::synthetic) {
    engine::workloads::SyntheticOptions o;
    o.partitions = s.partitions;
    o.input_bytes = s.synthetic_bytes;
    o.rounds = s.mix_rounds;
    o.pageable = s.synthetic_pageable;
    o.seed = s.id;
    o.name = s.name();
    auto j = engine::workloads::make_synthetic_job(o, buf.synthetic);
    if (!j) return Error{j.error().code, "building " + s.name() + ": " + j.error().what()};
    job = std::move(*j);
    if (!s.synthetic_streamed)
      for (auto& part : job.partitions) part.share_align = 0;
  } else {
    job.name = s.name();
    const std::uint32_t salt = static_cast<std::uint32_t>(s.id);
    const int rounds = s.mix_rounds;
    // Reserved up front: the engine keeps pointers into these vectors.
    std::size_t n_pageable = 0, n_registered = 0, n_out = 0, n_pinned_out = 0;
    for (const auto& ps : s.parts) {
      for (auto k : ps.inputs) {
        n_pageable += k == InputKind::pageable;
        n_registered += k == InputKind::registered;
      }
      (ps.pinned_output ? n_pinned_out : n_out) += 1;
    }
    buf.pageable.reserve(n_pageable);
    buf.registered.reserve(n_registered);
    buf.outputs.reserve(n_out);
    buf.pinned_outputs.reserve(n_pinned_out);
    for (std::size_t p = 0; p < s.parts.size(); ++p) {
      const auto& ps = s.parts[p];
      const std::size_t n = ps.words, bytes = n * 4;
      engine::Partition part;
      std::vector<std::size_t> produced_inputs;
      for (std::size_t k = 0; k < ps.inputs.size(); ++k) {
        auto fill = [&](std::span<std::uint32_t> w) {
          for (std::size_t i = 0; i < w.size(); ++i) w[i] = blend_input_word(s.id, p, k, i);
        };
        switch (ps.inputs[k]) {
          case InputKind::produced:
            part.inputs.push_back(Input::produced(bytes));
            produced_inputs.push_back(k);
            break;
          case InputKind::pageable: {
            auto& v = buf.pageable.emplace_back(n);
            fill(v);
            part.inputs.push_back(Input::pageable(std::as_bytes(std::span(v))));
            break;
          }
          case InputKind::registered: {
            // Whole pages of its own: registrations of one page cannot overlap.
            const std::size_t alloc_bytes = round_up(bytes, 4096);
            auto* raw = static_cast<std::uint32_t*>(std::aligned_alloc(4096, alloc_bytes));
            if (!raw) return Error{Errc::out_of_host_memory, s.name() + ": registered input"};
            auto& mem = buf.registered.emplace_back(raw);
            fill(std::span(mem.get(), n));
            auto reg = devices::register_host(backend, mem.get(), alloc_bytes);
            if (!reg)
              return Error{reg.error().code,
                           s.name() + ": registering an input: " + reg.error().what()};
            buf.registrations.push_back(std::move(*reg));
            part.inputs.push_back(
                Input::registered(std::as_bytes(std::span<const std::uint32_t>(mem.get(), n))));
            break;
          }
          case InputKind::pinned: {
            alloc::PinnedVec<std::uint32_t> v(pool);
            if (auto ec = v.try_resize_for_overwrite(n))
              return Error{ec, s.name() + ": the stress tool's own pinned pool could not give " +
                                   std::to_string(bytes) + " bytes: " + ec.message()};
            fill(v.span());
            part.inputs.push_back(Input::pinned(std::move(v)));
            break;
          }
        }
      }
      if (!produced_inputs.empty()) {
        const Fault fault = p == s.fault_partition ? s.fault : Fault::none;
        part.producer = [id = s.id, p, produced_inputs,
                         fault](std::span<const std::span<std::byte>> spans) -> std::error_code {
          if (fault == Fault::producer_error) return make_error_code(Errc::io_error);
          if (fault == Fault::producer_throws) throw std::runtime_error("stress: producer threw");
          for (std::size_t i = 0; i < spans.size(); ++i) {
            auto* w = reinterpret_cast<std::uint32_t*>(spans[i].data());
            for (std::size_t j = 0; j < spans[i].size() / 4; ++j)
              w[j] = blend_input_word(id, p, produced_inputs[i], j);
          }
          return {};
        };
      }
      std::span<std::uint32_t> out;
      if (ps.pinned_output) {
        alloc::PinnedVec<std::uint32_t> v(pool);
        if (auto ec = v.try_resize_for_overwrite(n))
          return Error{ec, s.name() + ": the stress tool's own pinned pool could not give " +
                               std::to_string(bytes) + " bytes for an output: " + ec.message()};
        std::fill(v.begin(), v.end(), 0u);
        out = v.span();
        buf.pinned_outputs.push_back(std::move(v));
        part.outputs.push_back(Output::to(std::as_writable_bytes(out), /*is_pinned=*/true));
      } else {
        out = buf.outputs.emplace_back(n);
        part.outputs.push_back(Output::to(std::as_writable_bytes(out)));
      }
      buf.out_views.push_back(out);
      part.scratch_bytes = ps.scratch_bytes;
      const bool two = ps.inputs.size() > 1;
      part.work.cpu = [salt, rounds, two](const KernelContext& c) {
        if (c.scratch) std::memset(c.scratch, 0xab, c.scratch_bytes);
        blend_cpu(reinterpret_cast<const std::uint32_t*>(c.inputs[0]),
                  two ? reinterpret_cast<const std::uint32_t*>(c.inputs[1]) : nullptr,
                  reinterpret_cast<std::uint32_t*>(c.outputs[0]), c.output_bytes[0] / 4, salt,
                  rounds);
        return std::error_code{};
      };
      part.work.gpu = [salt, rounds, two](const KernelContext& c) {
        return blend_gpu(reinterpret_cast<const std::uint32_t*>(c.inputs[0]),
                         two ? reinterpret_cast<const std::uint32_t*>(c.inputs[1]) : nullptr,
                         reinterpret_cast<std::uint32_t*>(c.outputs[0]), c.output_bytes[0] / 4,
                         salt, rounds, c.scratch, c.scratch_bytes, c.stream.native());
      };
      part.label = s.name() + "#" + std::to_string(p);
      job.partitions.push_back(std::move(part));
    }
    // The workload's own check before any device work: inputs and the
    // output agree in size.
    job.validate = [](const engine::Partition& p, std::size_t) -> Error {
      for (std::size_t k = 1; k < p.inputs.size(); ++k)
        if (p.inputs[k].bytes != p.inputs[0].bytes)
          return {Errc::invalid_argument,
                  "blend inputs differ in size: input " + std::to_string(k) + " has " +
                      std::to_string(p.inputs[k].bytes) + " bytes, input 0 has " +
                      std::to_string(p.inputs[0].bytes)};
      if (p.outputs.size() != 1 || p.outputs[0].bytes != p.inputs[0].bytes)
        return {Errc::invalid_argument, "blend output must be as large as its inputs"};
      return {};
    };
  }

  job.name = s.name();
  job.priority = s.priority;
  if (!s.affinity.empty()) job.devices = s.affinity;
  auto& fp = job.partitions[s.fault_partition];
  switch (s.fault) {
    case Fault::none:
    case Fault::bad_device:
      break;
    case Fault::empty_input:
      fp.inputs[0].bytes = 0;
      break;
    case Fault::mismatched_sizes:
      fp.inputs[1].bytes -= 16;
      break;
    case Fault::too_big_for_device:
      fp.scratch_bytes = std::size_t{1} << 50;  // beyond any device: refused, never allocated
      break;
    case Fault::too_big_for_host:
      // Checked before allocation: the engine must refuse it, not try it.
      fp.inputs.push_back(Input::produced(std::size_t{1} << 50));
      if (!fp.producer && !fp.split_producer)
        fp.producer = [](std::span<const std::span<std::byte>>) { return std::error_code{}; };
      break;
    case Fault::kernel_error: {
      auto fail = [](const KernelContext&) { return make_error_code(Errc::kernel_failed); };
      // The GPU version reports the error without launching: a kernel that
      // traps would poison the whole CUDA context of the process.
      fp.work.cpu = fail;
      fp.work.gpu = fail;
      break;
    }
    case Fault::producer_error:
    case Fault::producer_throws: {
      const bool throws = s.fault == Fault::producer_throws;
      const auto fail = [throws]() -> std::error_code {
        if (throws) throw std::runtime_error("stress: producer threw");
        return make_error_code(Errc::io_error);
      };
      if ((s.workload == Workload::synthetic && s.synthetic_streamed) ||
          s.workload == Workload::ntt_msm_h) {
        // One share fails, maybe while the partition waits on a device for it.
        fp.split_producer = [inner = fp.split_producer, fail](
                                std::span<const std::span<std::byte>> in, engine::ProducerTask t) {
          return t.index == t.count / 2 ? fail() : inner(in, t);
        };
      } else if (s.workload == Workload::synthetic) {
        fp.split_producer = nullptr;  // the synthetic workload's own, replaced
        fp.share_align = 0;          // a plain producer is never streamed
        fp.producer = [fail](std::span<const std::span<std::byte>>) { return fail(); };
      }
      break;
    }
    case Fault::verify_error:
    case Fault::verify_throws: {
      // ntt_msm_h fails its own check: the job verifies with another
      // SRS's secret (above).
      if (s.fault == Fault::verify_error && s.workload == Workload::ntt_msm_h) break;
      auto inner = job.verify;
      job.verify = [inner, bad = s.fault_partition, throws = s.fault == Fault::verify_throws](
                       const engine::Partition& p, std::size_t i) -> std::error_code {
        if (i == bad && throws) throw std::runtime_error("stress: check threw");
        if (i == bad) return make_error_code(Errc::verification_failed);
        return inner ? inner(p, i) : std::error_code{};
      };
      break;
    }
  }
  return job;
}

Expectation expected(const JobSpec& s) {
  const auto bad = [](std::vector<std::string> m) {
    return Expectation{make_error_code(Errc::invalid_argument), std::move(m)};
  };
  const std::string part = "partition " + std::to_string(s.fault_partition);
  switch (s.fault) {
    case Fault::none:
      return {};
    case Fault::empty_input:
      return bad({part + ": input 0 is empty (0 bytes)"});
    case Fault::mismatched_sizes:
      return bad({part + (s.workload == Workload::ntt_msm_h ? ": ntt_msm_h input b has"
                                                            : ": blend inputs differ in size")});
    case Fault::bad_device:
      return bad({"device " + std::to_string(s.affinity[1]) + " does not exist"});
    case Fault::too_big_for_device:
      return bad({part + " needs", "of device memory; the largest device budget is"});
    case Fault::too_big_for_host:
      return bad({part + " needs", "of pinned host memory; the host budget is"});
    case Fault::kernel_error:
      return {make_error_code(Errc::kernel_failed), {"device " + std::to_string(s.fault_device)}};
    case Fault::producer_error:
      return {make_error_code(Errc::io_error), {part + ": producer failed"}};
    case Fault::verify_error:
      // Another SRS's secret fails every partition; whichever is checked
      // first is named.
      if (s.workload == Workload::ntt_msm_h)
        return {make_error_code(Errc::verification_failed), {" failed verification"}};
      return {make_error_code(Errc::verification_failed), {part + " failed verification"}};
    case Fault::producer_throws:
      return {make_error_code(Errc::callable_threw),
              {part + ": producer threw: stress: producer threw"}};
    case Fault::verify_throws:
      return {make_error_code(Errc::callable_threw),
              {part + ": its verify threw: stress: check threw"}};
  }
  return {};
}

std::string verify_outputs(const JobSpec& s, const JobBuffers& buf) {
  auto mismatch = [&](std::size_t p, std::size_t i, std::uint32_t got, std::uint32_t want) {
    return "partition " + std::to_string(p) + " word " + std::to_string(i) + " is " +
           std::to_string(got) + ", the CPU version gives " + std::to_string(want);
  };
  if (s.workload == Workload::ntt_msm_h) {
    const auto& run = *buf.ntt;
    if (run.checks.size() != s.partitions) return "ntt_msm_h checks missing";
    for (std::size_t p = 0; p < s.partitions; ++p) {
      const auto& c = run.checks[p];
      if (!c.checked)
        return "partition " + std::to_string(p) + "'s point was not checked with the toy secret";
      if (!c.ok)
        return "partition " + std::to_string(p) +
               "'s point is not [(A B - C)(tau) / delta] G of the toy secret";
    }
    if (!run.all_verified()) return "ntt_msm_h: not every partition verified";
    return {};
  }
  if (s.workload == Workload::synthetic) {
    const auto& run = *buf.synthetic;
    std::vector<std::uint32_t> in(s.synthetic_bytes / 4), want(s.synthetic_bytes / 16);
    for (std::size_t p = 0; p < s.partitions; ++p) {
      engine::workloads::synthetic_fill(s.id, p, in);
      engine::workloads::synthetic_cpu(in.data(), want.data(), want.size(), s.mix_rounds);
      const auto got = run.outputs[p];
      if (got.size() != want.size()) return "partition " + std::to_string(p) + " output size";
      for (std::size_t i = 0; i < want.size(); ++i)
        if (got[i] != want[i]) return mismatch(p, i, got[i], want[i]);
    }
    return {};
  }
  for (std::size_t p = 0; p < s.parts.size(); ++p) {
    const auto& ps = s.parts[p];
    std::vector<std::uint32_t> a(ps.words), b, want(ps.words);
    for (std::size_t i = 0; i < ps.words; ++i) a[i] = blend_input_word(s.id, p, 0, i);
    if (ps.inputs.size() > 1) {
      b.resize(ps.words);
      for (std::size_t i = 0; i < ps.words; ++i) b[i] = blend_input_word(s.id, p, 1, i);
    }
    blend_cpu(a.data(), b.empty() ? nullptr : b.data(), want.data(), ps.words,
              static_cast<std::uint32_t>(s.id), s.mix_rounds);
    const auto got = buf.out_views[p];
    for (std::size_t i = 0; i < ps.words; ++i)
      if (got[i] != want[i]) return mismatch(p, i, got[i], want[i]);
  }
  return {};
}

}  // namespace stoker::tools::stress
