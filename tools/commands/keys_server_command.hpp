// `stoker keys load|list|evict --server S`: a daemon's proving keys
// (`stoker serve`, docs/SERVE.md), through its HTTP API: POST /v1/keys,
// GET /v1/keys, DELETE /v1/keys/{name}. Each prints one line (list: a
// table), or with --json the daemon's answer as it came.
#pragma once

namespace stoker::tools {

// The help of these verbs, for `stoker keys --help`.
extern const char* const kKeysServerSynopsis;
extern const char* const kKeysServerSubcommands;

// argv[0] is the verb ("load", "list", "evict").
int keys_load_command(int argc, char** argv);
int keys_list_command(int argc, char** argv);
int keys_evict_command(int argc, char** argv);

}  // namespace stoker::tools
