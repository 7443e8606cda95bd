// Timed runs of a job built once, for the bench commands: each run submits
// a copy of the prepared job, with its outputs cleared before and checked
// after, outside the time the job reports.
#pragma once

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <functional>
#include <string>
#include <system_error>

#include "engine/engine.hpp"
#include "engine/job.hpp"

namespace stoker::tools {

// Runs a copy of `prepared` on `e` and waits for it. Its verify runs
// afterwards on this thread, on every partition, rather than inside the
// job on the engine's workers, where it would be timed: the synthetic
// workload's checksum of one 64 MiB output is a serial loop (14 ms on the
// development host's idle core), and the last partition's would sit in
// every run's wall time. `clear_outputs` runs before the submit, so that a
// run that writes no outputs fails the check instead of passing on the
// previous run's; `ran`, if set, as soon as the job has completed, before
// the check.
inline Result<engine::JobReport> run_prepared(engine::Engine& e, const engine::Job& prepared,
                                              const std::function<void()>& clear_outputs,
                                              const std::function<void()>& ran = {}) {
  if (clear_outputs) clear_outputs();
  engine::Job job = prepared;
  job.verify = nullptr;
  boost::asio::io_context io;
  std::error_code ec;
  engine::JobReport report;
  e.async_submit(std::move(job),
                 boost::asio::bind_executor(io, [&](std::error_code c, engine::JobReport r) {
                   ec = c;
                   report = std::move(r);
                 }));
  io.run();
  if (ran) ran();
  if (ec) return Error{ec, report.error};
  if (prepared.verify)
    for (std::size_t p = 0; p < prepared.partitions.size(); ++p)
      if (auto v = prepared.verify(prepared.partitions[p], p))
        return Error{v, prepared.name + ": partition " + std::to_string(p) +
                            " failed verification after the run: " + v.message()};
  return report;
}

}  // namespace stoker::tools
