// The daemon's HTTP API: routes requests to the ProofService and answers
// with JSON (docs/SERVE.md lists every endpoint with its bodies).
//
//   GET    /healthz                 200 while the process serves
//   GET    /readyz                  200 once the journal's keys are loaded; 503 draining
//   GET    /metrics                 Prometheus text format
//   GET    /v1/status               devices, queue, keys, memory
//   POST   /v1/keys                 {"name", "path", "format"} -> 201 once resident
//   GET    /v1/keys                 {"keys": [...]}
//   DELETE /v1/keys/{name}          200 once evicted
//   POST   /v1/proofs               {"key", "witness": {"path"} | {"shm": {...}}, "priority",
//                                   "idempotency_key"} -> 202 {"id"}; or the witness file as
//                                   the body (application/octet-stream), ?key=&priority=...
//   GET    /v1/proofs/{id}[?wait_ms=T]
//   DELETE /v1/proofs/{id}          cancels
//   POST   /v1/shm                  {"name", "bytes"}
//   DELETE /v1/shm/{name}
//
// Every refusal is {"error": "..."} with its status (400, 403, 404, 405,
// 409, 413, 503, 507).
#pragma once

#include "tools/serve/http_server.hpp"
#include "tools/serve/metrics.hpp"
#include "tools/serve/proof_service.hpp"

namespace stoker::serve {

struct ApiOptions {
  // The longest ?wait_ms a long poll may ask for.
  std::chrono::milliseconds max_wait{std::chrono::minutes(10)};
};

// The handler for HttpServer; `service` and `metrics` outlive it.
RequestHandler make_api(ProofService& service, Metrics& metrics, ApiOptions options = {});

}  // namespace stoker::serve
