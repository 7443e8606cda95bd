// The stoker binary: one entry point, a subcommand per job.
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <string_view>

#include "common/host_memory_limit.hpp"
#include "devices/device_set.hpp"
#include "tools/bench/alloc_bench.hpp"
#include "tools/bench/msm_bench.hpp"
#include "tools/bench/ntt_msm_h_bench.hpp"
#include "tools/bench/pipeline_bench.hpp"
#include "tools/bench/prove_bench.hpp"
#include "tools/bench/serve_bench.hpp"
#include "tools/commands/doctor_command.hpp"
#include "tools/commands/info_command.hpp"
#include "tools/commands/kernel_commands.hpp"
#include "tools/commands/keys_command.hpp"
#include "tools/commands/msm_command.hpp"
#include "tools/commands/prove_command.hpp"
#include "tools/commands/run_command.hpp"
#include "tools/commands/serve_command.hpp"
#include "tools/commands/srs_command.hpp"
#include "tools/commands/verify_command.hpp"
#include "tools/stress/stress_command.hpp"

namespace {

using Command = int (*)(int, char**);

struct Entry {
  std::string_view name;
  Command fn;
  std::string_view help;
};

int usage(FILE* out);
int bench_usage(FILE* out);

const Entry kCommands[] = {
    {"run", stoker::tools::run_command, "run the main job through the engine"},
    {"info", stoker::tools::info_command, "list devices, their properties and topology"},
    {"doctor", stoker::tools::doctor_command, "measure how this machine can feed its GPUs"},
    {"ntt", stoker::tools::ntt_command, "NTT of a file of BLS12-381 scalars"},
    {"hpoly", stoker::tools::hpoly_command, "Groth16 H polynomial from files a, b, c"},
    {"msm", stoker::tools::msm_command,
     "G1 or G2 multi-scalar multiplication of files of points and scalars"},
    {"srs", stoker::tools::srs_command, "generate a toy SRS file (testing only)"},
    {"prove", stoker::tools::prove_command,
     "a Groth16 proof from a snarkjs or bellman key and witness, here or by a daemon"},
    {"verify", stoker::tools::verify_command,
     "check a Groth16 proof (snarkjs's or bellman's files)"},
    {"keys", stoker::tools::keys_command,
     "toy Groth16 keys (testing only); load, list, evict a daemon's keys"},
    {"serve", stoker::tools::serve_command, "the daemon: keys resident, proofs for every client"},
    {"stress", stoker::tools::stress_command, "the engine under load, faults and bad input"},
};

const Entry kBenches[] = {
    {"alloc", stoker::tools::bench_alloc_command, "pinned pool vs fresh pinned allocations"},
    {"ntt", stoker::tools::bench_ntt_command, "NTT kernels, device-resident"},
    {"hpoly", stoker::tools::bench_hpoly_command, "H polynomial kernels, device-resident"},
    {"msm", stoker::tools::bench_msm_command,
     "G1 or G2 MSM on the GPU: dense and witness scalars, resident and from pinned memory"},
    {"prove", stoker::tools::bench_prove_command,
     "whole Groth16 proofs through the engine, beside supraseal-c2"},
    {"pipeline", stoker::tools::bench_pipeline_command, "naive baseline vs the engine"},
    {"serve", stoker::tools::bench_serve_command,
     "proofs through the daemon vs the in-process API"},
    {"ntt_msm_h", stoker::tools::bench_ntt_msm_h_command,
     "hpoly then MSM, the SRS resident; naive baseline vs the engine"},
};

int usage(FILE* out) {
  std::fprintf(out, "usage: stoker <command> [options]\n\ncommands:\n");
  for (const auto& c : kCommands)
    std::fprintf(out, "  %-10.*s %.*s\n", int(c.name.size()), c.name.data(), int(c.help.size()),
                 c.help.data());
  std::fprintf(out, "  %-10s %s\n", "bench", "benchmarks: stoker bench <name>");
  for (const auto& b : kBenches)
    std::fprintf(out, "    %-8.*s %.*s\n", int(b.name.size()), b.name.data(), int(b.help.size()),
                 b.help.data());
  std::fprintf(out,
               "\n'stoker <command> --help' describes a command's options; 'stoker --version'\n"
               "prints the version.\n"
               "Exit status: 0 done, 1 a failure while running, 2 a usage error (the command\n"
               "line or a STOKER_* variable, including devices this machine does not have).\n");
  return out == stderr ? 2 : 0;
}

int bench_usage(FILE* out) {
  std::fprintf(out, "usage: stoker bench <name> [options]\n\nbenchmarks:\n");
  for (const auto& b : kBenches)
    std::fprintf(out, "  %-10.*s %.*s\n", int(b.name.size()), b.name.data(), int(b.help.size()),
                 b.help.data());
  std::fprintf(out, "\n'stoker bench <name> --help' describes a benchmark's options.\n");
  return out == stderr ? 2 : 0;
}

int dispatch(int argc, char** argv) {
  if (argc < 2) return usage(stderr);
  const std::string_view cmd = argv[1];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") return usage(stdout);
  if (cmd == "--version" || cmd == "version") {
    std::printf("stoker %s\n", STOKER_VERSION);
    return 0;
  }
  if (cmd == "bench") {
    if (argc < 3) return bench_usage(stderr);
    const std::string_view name = argv[2];
    if (name == "-h" || name == "--help" || name == "help") return bench_usage(stdout);
    for (const auto& b : kBenches)
      if (b.name == name) return b.fn(argc - 2, argv + 2);
    std::fprintf(stderr, "stoker bench: unknown benchmark '%s'\n", argv[2]);
    return bench_usage(stderr);
  }
  for (const auto& c : kCommands)
    if (c.name == cmd) return c.fn(argc - 1, argv + 1);
  std::fprintf(stderr, "stoker: unknown command '%s'\n", argv[1]);
  return usage(stderr);
}

}  // namespace

// Commands report errors themselves; whatever escapes them (an allocation
// that failed, a library's exception) ends the process with one line and
// status 1, not std::terminate's abort and core dump.
int main(int argc, char** argv) {
  std::string name = argc >= 2 ? argv[1] : "";
  if (name == "bench" && argc >= 3) name += std::string(" ") + argv[2];
  const char* command = name.c_str();
  try {
    return dispatch(argc, argv);
  } catch (const std::bad_alloc&) {
    // What no command foresaw: still the limit, in words.
    std::fprintf(stderr, "%s\n",
                 stoker::common::host_memory_refused("stoker " + name).what().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stoker %s: %s\n", command, e.what());
  } catch (...) {
    std::fprintf(stderr, "stoker %s: an unknown exception\n", command);
  }
  return 1;
}
