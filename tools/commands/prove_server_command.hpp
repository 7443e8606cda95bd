// `stoker prove --server S --key NAME ...`: a proof made by a daemon
// (`stoker serve`) with a key it holds, written to the same files as
// `stoker prove` writes them (prove_command.hpp parses the options and
// hands them here).
//
// The witness goes as the request's body (POST /v1/proofs?key=...,
// application/octet-stream), so client and daemon need no directory in
// common, or with --witness-by path as its absolute path for the daemon to
// read. The command then long-polls GET /v1/proofs/{id} until the proof
// has ended. An interrupt meanwhile (SIGINT, SIGTERM, SIGHUP) cancels the
// proof at the daemon (DELETE /v1/proofs/{id}) before the command ends by
// it; no output is written then.
#pragma once

#include <string>

#include "tools/cli/command_line.hpp"

namespace stoker::tools {

struct ServerProveArgs {
  std::string server, token_file, key, idempotency_key;
  std::string priority = "normal";  // critical, high, normal, low
  std::string witness_by = "body";  // body, path
  // A zkey key's witness and outputs.
  std::string wtns, proof, public_;
  // A bellman key's.
  std::string witness, proof_bytes, proof_json, inputs;
};

// The exit status: 0 written, 1 a failure (the daemon unreachable, its
// refusal, a failed or cancelled proof), 2 a usage error.
int prove_by_server(const CommandLine& cl, const ServerProveArgs& args);

}  // namespace stoker::tools
