// `stoker keys generate`: a TOY Groth16 proving key over BLS12-381 for a
// made-up circuit, with a witness that satisfies it, from secrets derived
// from a seed, for tests and benchmarks at sizes no ceremony here can give.
// TESTING ONLY: whoever knows the seed can forge proofs with the key.
// `stoker keys load|list|evict --server S`: a daemon's keys
// (keys_server_command.hpp).
#pragma once

namespace stoker::tools {

// stoker keys generate --log-n K --seed S (--zkey K --wtns W [--vk F] | --params P --witness W)
// stoker keys load|list|evict --server S ...
int keys_command(int argc, char** argv);

}  // namespace stoker::tools
