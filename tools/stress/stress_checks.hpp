// The invariants of `stoker stress` that are a comparison and nothing more:
// a completed job's outcome against the one its spec must have, and the
// engine's resident SRS bytes against the toy SRS. Pure functions of what
// they are given, so the round calls them from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <system_error>

#include "engine/engine.hpp"
#include "tools/stress/stress_job_record.hpp"

namespace stoker::tools::stress {

// How a job ended, when its ending was allowed.
enum class Outcome {
  wrong,               // not allowed: the check names why
  succeeded,           // (a cancelled job that finished first included)
  failed_as_expected,  // the injected fault's code and message
  aborted,             // cancelled before it finished
  collateral,          // failed by another job's kernel fault on its devices
};

// Empty when the job may end with `ec` and `report` (null when the token
// hands the handler no report), else what is wrong, for a violation that
// names the job. `dead_mask` holds the devices a kernel fault may have
// broken (bit d: device d). Sets `outcome`; it counts only when the result
// is empty.
std::string check_outcome(const JobRecord& rec, std::error_code ec, const engine::JobReport* report,
                          std::uint64_t dead_mask, Outcome& outcome);

// Whether a failure is the machine's refusal, not the engine's logic: a
// thread the system would not start (common::start_thread's codes) or host
// memory it would not give (Errc::out_of_host_memory, or callable_threw for
// a job's callable that threw std::bad_alloc, with common::kRefusedBySystem
// in `message`). A budget's refusal is neither.
bool machine_refused(std::error_code ec, const std::string& message);

// Empty when every device holds `want` bytes of resident SRS points, else
// the first device that does not.
std::string resident_mismatch(const engine::EngineStats& s, std::size_t want);

}  // namespace stoker::tools::stress
