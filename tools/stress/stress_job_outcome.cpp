// What a job must come to (stress_jobs.hpp): the outcome its spec expects,
// and the check of a successful job's outputs against the CPU version.
#include <string>
#include <vector>

#include "tools/stress/stress_blend.hpp"
#include "tools/stress/stress_jobs.hpp"

namespace stoker::tools::stress {

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
