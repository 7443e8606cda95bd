// The job mix (stress_jobs.hpp): the names, the generator and the drawing
// of a spec. Building a spec into a job is stress_job_build.cpp; the outcome
// it must have and the check of its outputs, stress_job_outcome.cpp.
#include "tools/stress/stress_jobs.hpp"

#include <algorithm>

#include "common/splitmix64.hpp"

namespace stoker::tools::stress {

using common::splitmix64;
using engine::InputKind;

namespace {

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
  s_ += common::kSplitmix64Gamma;
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

}  // namespace stoker::tools::stress
