// `stoker srs`; see srs_command.hpp.
#include "tools/commands/srs_command.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/elapsed.hpp"
#include "common/host_memory_limit.hpp"
#include "devices/device_set.hpp"
#include "engine/workloads/toy_srs.hpp"
#include "kernels/detail/parallel.hpp"
#include "kernels/g1_encoding.hpp"
#include "tools/cli/command_line.hpp"
#include "tools/cli/counted.hpp"
#include "tools/cli/memory_guard.hpp"
#include "tools/cli/output_file.hpp"

namespace stoker::tools {
namespace {

constexpr const char* kSrsHelp =
    "usage: stoker srs generate --log-n K --seed S --out FILE [--cpu | --device N]\n"
    "\n"
    "subcommands:\n"
    "  generate   write a toy SRS file (testing only; 'stoker srs generate --help')\n";

constexpr const char* kGenerateHelp =
    "usage: stoker srs generate --log-n K --seed S --out FILE [--cpu | --device N]\n"
    "\n"
    "Writes a TOY SRS for testing and benchmarks: the 2^K - 1 H-query points\n"
    "[tau^i Z(tau) / delta] G of a Groth16 setup for 2^K constraints, Z(x) = x^(2^K) - 1.\n"
    "Its secret (tau, delta) derives from the seed: anyone who knows the seed can\n"
    "forge proofs. NEVER use it in production.\n"
    "  --log-n K    constraints 2^K, K in 1..28 (the file is 96 * (2^K - 1) bytes)\n"
    "  --seed S     the seed the secret derives from (a 64-bit integer)\n"
    "  --out FILE   the points, 96 bytes each: the uncompressed zcash/IETF G1 encoding,\n"
    "               as `stoker msm --points` and the engine's SRS loading read them\n"
    "  --cpu        run on the CPU even where a GPU exists\n"
    "  --device N   the GPU to run on (CUDA's numbering; default 0)\n"
    "\n"
    "The file is the same, byte for byte, on a GPU or the CPU. It is assembled in\n"
    "memory and then written in one piece: a failure leaves no file behind.\n"
    "Prints one line: points, bytes, seconds and where it ran.\n";

// Points computed per make_toy_srs call: 1.5 GiB of affine points, so that
// setting up a GPU (pinned buffers, a stream) is paid a few times only.
constexpr std::size_t kChunkPoints = std::size_t{1} << 24;

int generate(int argc, char** argv) {
  CommandLine cl("srs generate", kGenerateHelp);
  std::optional<unsigned> log_n;
  std::optional<std::uint64_t> seed;
  std::string out_path;
  bool cpu = false;
  std::optional<int> device;
  cl.number("--log-n", log_n, engine::workloads::kToySrsMinLogN, engine::workloads::kToySrsMaxLogN);
  cl.number("--seed", seed);
  cl.value("--out", out_path);
  cl.flag("--cpu", cpu);
  cl.gpu("--device", device);
  cl.exclusive({"--cpu", "--device"});
  if (auto rc = cl.parse(argc, argv)) return *rc;
  if (!log_n) return cl.usage_error("--log-n is required");
  if (!seed) return cl.usage_error("--seed is required");
  if (out_path.empty()) return cl.usage_error("--out is required");
  const int gpus = devices::cuda_device_count();
  const bool use_gpu = !cpu && gpus > 0;
  const int ordinal = use_gpu ? device.value_or(0) : -1;
  auto out = OutputFile::check(out_path);
  if (!out) return cl.usage_error(out.error().what());

  const auto start = std::chrono::steady_clock::now();
  const std::size_t n = engine::workloads::toy_srs_points(*log_n);
  const std::size_t bytes = n * kernels::kG1EncodedBytes;
  // The file's bytes, and a chunk of points to encode them from.
  const std::string what = "the toy SRS of 2^" + std::to_string(*log_n) + " - 1 points";
  const std::size_t need = bytes + std::min(n, kChunkPoints) * sizeof(kernels::G1Affine);
  if (Error e = common::check_host_memory(what, need)) return cl.failure(e.what());
  std::string file;
  std::vector<kernels::G1Affine> points;
  try {
    file.resize(bytes);
    points.resize(std::min(n, kChunkPoints));
  } catch (const std::bad_alloc&) {
    return cl.failure(common::host_memory_refused(what, need).what());
  }
  for (std::size_t first = 0; first < n; first += kChunkPoints) {
    const std::size_t count = std::min(kChunkPoints, n - first);
    const std::span<kernels::G1Affine> chunk(points.data(), count);
    if (Error e = engine::workloads::make_toy_srs(*seed, *log_n, first, chunk, ordinal))
      return cl.failure(e.what());
    auto* dst = reinterpret_cast<unsigned char*>(file.data()) + first * kernels::kG1EncodedBytes;
    kernels::detail::parallel_for(count, 0, [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i)
        kernels::encode_g1(points[i], dst + i * kernels::kG1EncodedBytes);
    });
  }
  std::vector<kernels::G1Affine>().swap(points);  // not held while the file is written
  if (Error e = out->write(file)) return cl.failure(e.what());
  const double seconds = common::seconds_since(start);
  const std::string where = use_gpu ? "GPU " + std::to_string(ordinal) : "the CPU";
  std::printf("toy SRS (testing only) for 2^%u: %s, %zu bytes to %s in %.2f s on %s\n", *log_n,
              counted(n, "point").c_str(), bytes, out_path.c_str(), seconds, where.c_str());
  return 0;
}

}  // namespace

int srs_command(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "stoker srs: a subcommand is required\n%s", kSrsHelp);
    return 2;
  }
  const std::string_view sub = argv[1];
  if (sub == "-h" || sub == "--help" || sub == "help") {
    std::fputs(kSrsHelp, stdout);
    return 0;
  }
  if (sub == "generate")
    return with_memory_guard("srs generate", [&] { return generate(argc - 1, argv + 1); });
  std::fprintf(stderr, "stoker srs: unknown subcommand '%s'\n%s", argv[1], kSrsHelp);
  return 2;
}

}  // namespace stoker::tools
