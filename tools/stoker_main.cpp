// The stoker binary: one entry point, a subcommand per job.
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "devices/device_set.hpp"

#ifdef STOKER_HAVE_INFO_COMMAND
#include "tools/info_command.hpp"
#endif
#ifdef STOKER_HAVE_DOCTOR_COMMAND
#include "tools/doctor_command.hpp"
#endif
#ifdef STOKER_HAVE_ALLOC_BENCH
#include "tools/alloc_bench.hpp"
#endif
#ifdef STOKER_HAVE_KERNEL_COMMANDS
#include "tools/kernel_commands.hpp"
#endif
#ifdef STOKER_HAVE_RUN_COMMAND
#include "tools/run_command.hpp"
#endif
#ifdef STOKER_HAVE_PIPELINE_BENCH
#include "tools/pipeline_bench.hpp"
#endif
#ifdef STOKER_HAVE_STRESS_COMMAND
#include "tools/stress_command.hpp"
#endif

namespace {

using Command = int (*)(int, char**);

struct Entry {
  std::string_view name;
  Command fn;
  std::string_view help;
};

int usage(FILE* out);

#ifndef STOKER_HAVE_RUN_COMMAND
// Until the engine's main job exists: describe the machine, then diagnose it.
int run_fallback(int argc, char** argv) {
#ifdef STOKER_HAVE_INFO_COMMAND
  char info[] = "info";
  char* info_argv[] = {info, nullptr};
  if (int rc = stoker::tools::info_command(1, info_argv)) return rc;
#endif
#ifdef STOKER_HAVE_DOCTOR_COMMAND
  if (stoker::devices::cuda_device_count() > 0) {
    char doctor[] = "doctor";
    char quick[] = "--quick";
    char* doctor_argv[] = {doctor, quick, nullptr};
    return stoker::tools::doctor_command(2, doctor_argv);
  }
#endif
  return 0;
}
#endif

const Entry kCommands[] = {
#ifdef STOKER_HAVE_RUN_COMMAND
    {"run", stoker::tools::run_command, "run the main job through the engine"},
#else
    {"run", run_fallback, "describe and diagnose this machine (the engine's job comes later)"},
#endif
#ifdef STOKER_HAVE_INFO_COMMAND
    {"info", stoker::tools::info_command, "list devices, their properties and topology"},
#endif
#ifdef STOKER_HAVE_DOCTOR_COMMAND
    {"doctor", stoker::tools::doctor_command, "measure how this machine can feed its GPUs"},
#endif
#ifdef STOKER_HAVE_KERNEL_COMMANDS
    {"ntt", stoker::tools::ntt_command, "NTT of a file of BLS12-381 scalars"},
    {"hpoly", stoker::tools::hpoly_command, "Groth16 H polynomial from files a, b, c"},
#endif
#ifdef STOKER_HAVE_STRESS_COMMAND
    {"stress", stoker::tools::stress_command, "the engine under load, faults and bad input"},
#endif
};

const Entry kBenches[] = {
#ifdef STOKER_HAVE_ALLOC_BENCH
    {"alloc", stoker::tools::bench_alloc_command, "pinned pool vs fresh pinned allocations"},
#endif
#ifdef STOKER_HAVE_KERNEL_COMMANDS
    {"ntt", stoker::tools::bench_ntt_command, "NTT kernels, device-resident"},
    {"hpoly", stoker::tools::bench_hpoly_command, "H polynomial kernels, device-resident"},
#endif
#ifdef STOKER_HAVE_PIPELINE_BENCH
    {"pipeline", stoker::tools::bench_pipeline_command, "naive baseline vs the engine"},
#endif
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
  std::fprintf(out, "\n'stoker <command> --help' describes a command's options.\n");
  return out == stderr ? 2 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage(stderr);
  const std::string_view cmd = argv[1];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") return usage(stdout);
  if (cmd == "bench") {
    if (argc < 3) return usage(stderr);
    for (const auto& b : kBenches)
      if (b.name == argv[2]) return b.fn(argc - 2, argv + 2);
    std::fprintf(stderr, "stoker bench: unknown benchmark '%s'\n", argv[2]);
    return usage(stderr);
  }
  for (const auto& c : kCommands)
    if (c.name == cmd) return c.fn(argc - 1, argv + 1);
  std::fprintf(stderr, "stoker: unknown command '%s'\n", argv[1]);
  return usage(stderr);
}
