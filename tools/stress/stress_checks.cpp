#include "tools/stress/stress_checks.hpp"

#include <algorithm>

#include "common/host_memory_limit.hpp"

namespace stoker::tools::stress {

namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// A kernel fault broke a device the job could use: a partition on it fails
// with the fault, and a job left with no healthy device fails as a device
// fault.
bool collateral(const JobRecord& rec, std::error_code ec, const engine::JobReport* report,
                std::uint64_t dead_mask) {
  if (dead_mask == 0) return false;
  bool any = false, all = true;
  for (int d : rec.allowed) {
    const bool dead = d >= 0 && d < 64 && (dead_mask >> d & 1);
    any |= dead;
    all &= dead;
  }
  const std::string msg = report ? report->error : std::string{};
  if (ec == make_error_code(Errc::kernel_failed) && any && (!report || contains(msg, "faulted")))
    return true;
  return ec == make_error_code(Errc::device_fault) && all &&
         (!report || contains(msg, "no healthy device"));
}

}  // namespace

std::string check_outcome(const JobRecord& rec, std::error_code ec, const engine::JobReport* report,
                          std::uint64_t dead_mask, Outcome& outcome) {
  const auto& exp = rec.expect;
  const std::string got =
      ec ? ec.message() + (report ? " (\"" + report->error + "\")" : "") : "success";
  if (!ec) {
    outcome = Outcome::succeeded;
    if (exp.code)
      return "succeeded, but must fail with " + exp.code.message() + " naming '" +
             exp.message.front() + "'";
    if (!report) return "succeeded without a report";
    if (report->partitions_done != rec.partitions || report->parts.size() != rec.partitions)
      return "succeeded with " + std::to_string(report->partitions_done) + " of " +
             std::to_string(rec.partitions) + " partitions done";
    for (const auto& p : report->parts)
      if (std::find(rec.allowed.begin(), rec.allowed.end(), p.device) == rec.allowed.end())
        return "partition " + std::to_string(p.index) + " ran on device " +
               std::to_string(p.device) + ", outside its affinity";
    if (auto bad = verify_outputs(rec.spec, rec.buffers); !bad.empty())
      return "succeeded with a wrong output: " + bad;
    return {};
  }
  if (ec == engine::operation_aborted() && rec.spec.cancel) {
    outcome = Outcome::aborted;
    if (report && !contains(report->error, "cancelled"))
      return "aborted, but its report does not say cancelled: " + report->error;
    if (report && report->partitions_done > rec.partitions) return "aborted with too many done";
    return {};
  }
  if (exp.code && ec == exp.code) {
    bool named = true;
    if (report)
      for (const auto& m : exp.message) named &= contains(report->error, m);
    if (named) {
      outcome = Outcome::failed_as_expected;
      if (report && report->partitions_done >= rec.partitions)
        return "failed as expected, yet reports every partition done";
      if (report && exp.code == make_error_code(Errc::invalid_argument) &&
          report->partitions_done != 0)
        return "refused as bad input after partitions ran";
      return {};
    }
  }
  if (collateral(rec, ec, report, dead_mask)) {
    outcome = Outcome::collateral;
    return {};
  }
  outcome = Outcome::wrong;
  std::string want = exp.code ? exp.code.message() : std::string("success");
  for (const auto& m : exp.message) want += " naming '" + m + "'";
  if (rec.spec.cancel) want += " or operation_aborted";
  return "completed with " + got + ", expected " + want;
}

bool machine_refused(std::error_code ec, const std::string& message) {
  if (ec == std::errc::resource_unavailable_try_again || ec == std::errc::not_enough_memory)
    return true;
  // A job's callable that threw std::bad_alloc fails it with
  // callable_threw, its text the refusal's (engine/detail/guarded_call.hpp).
  return (ec == make_error_code(Errc::out_of_host_memory) ||
          ec == make_error_code(Errc::callable_threw)) &&
         contains(message, std::string(common::kRefusedBySystem));
}

std::string resident_mismatch(const engine::EngineStats& s, std::size_t want) {
  for (std::size_t d = 0; d < s.device_resident_bytes.size(); ++d)
    if (s.device_resident_bytes[d] != want)
      return "device " + std::to_string(d) + " holds " +
             std::to_string(s.device_resident_bytes[d]) +
             " bytes of resident SRS points, the toy SRS has " + std::to_string(want);
  return {};
}

}  // namespace stoker::tools::stress
