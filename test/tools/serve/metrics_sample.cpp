// Prints a registry that uses every feature of tools/serve/metrics.hpp, for
// promtool_check.sh to parse and lint the way Prometheus would: labelled
// and unlabelled families of each type, escaping, text that is not UTF-8,
// a gauge cleared and set again, an empty family, NaN and +Inf.
#include <cmath>
#include <iostream>
#include <limits>

#include "tools/serve/metrics.hpp"

int main() {
  using stoker::serve::exponential_buckets;
  stoker::serve::Metrics m;

  auto& proofs =
      m.counter("stoker_proofs_total", "Proofs finished, by key and outcome.", {"key", "state"});
  proofs.add({"bits", "done"}, 41);
  proofs.add({"bits", "failed"});
  proofs.add({"C:\\keys\\\"big\"\nkey", "done"});    // backslash, quote, newline
  proofs.add({"caf\xC3\xA9 \xFF", "cancelled"}, 0);  // UTF-8 and a byte that is not
  m.counter("stoker_restarts_total", "Times the daemon started.\nA backslash: \\.");
  m.counter("stoker_rejected_requests_total", "Requests refused, by reason (none yet).",
            {"reason"});

  auto& queued = m.gauge("stoker_queued_proofs", "Proofs waiting to run.");
  queued.add({}, 3);
  queued.add({}, -1);
  auto& used = m.gauge("stoker_device_memory_used_bytes", "Device memory in use.", {"device"});
  used.set({"0"}, 1e12);
  used.clear();  // recomputed at every scrape: device 0 went away
  used.set({"1"}, 80.5e9);
  auto& temperature =
      m.gauge("stoker_device_temperature_celsius", "Temperature (NaN: unknown).", {"device"});
  temperature.set({"1"}, std::nan(""));
  m.gauge("stoker_host_memory_limit_bytes", "The host memory budget (+Inf: none).")
      .set({}, std::numeric_limits<double>::infinity());

  auto& duration = m.histogram("stoker_proof_duration_seconds", "From accept to finish.", {"key"},
                               exponential_buckets(0.01, 4, 6));
  for (double s : {0.004, 0.05, 0.3, 0.3, 2.0, 50.0}) duration.observe({"bits"}, s);
  duration.observe({"other"}, 0.01);
  auto& body =
      m.histogram("stoker_request_body_bytes", "Request body sizes.", {}, {1024, 65536, 1048576});
  body.observe({}, 300);
  body.observe({}, 2e6);

  std::cout << m.render();
  return std::cout.good() ? 0 : 1;
}
