// The kernels' subcommands; see kernel_commands.hpp.
#include "tools/commands/kernel_commands.hpp"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "devices/device_set.hpp"
#include "devices/pinned_buffer.hpp"
#include "engine/strict_number.hpp"
#include "kernels/field.cuh"
#include "kernels/hpoly.hpp"
#include "kernels/ntt.hpp"
#include "tools/bench/bench_stats.hpp"
#include "tools/cli/command_line.hpp"
#include "tools/cli/json_output.hpp"
#include "tools/cli/output_file.hpp"

namespace stoker::tools {
namespace {

using engine::integer_problem;
using engine::parse_integer;
using kernels::Fr;
using kernels::NttKind;

// ---- arguments -----------------------------------------------------------

// The command line as text, read by CommandLine (tools/cli/command_line.hpp):
// --opt value or --opt=value, each once.
struct Args {
  std::map<std::string, std::string> values;
  std::map<std::string, bool> flags;
};

// Reads the command line into `a`: options in `value_names` take a value,
// those in `flag_names` none, and every command takes --device N (not with
// --cpu). nullopt to go on; otherwise the exit status (--help: 0, a usage
// error: 2, a --device this machine lacks: 1), the problem printed.
std::optional<int> parse(const std::string& name, const std::string& help, int argc, char** argv,
                         Args& a, std::vector<std::string> value_names,
                         const std::vector<std::string>& flag_names) {
  CommandLine cl(name, help);
  value_names.push_back("--device");
  for (const auto& v : value_names)
    cl.custom(v, [&a, v](std::string_view text) {
      a.values[v] = text;
      return std::string();
    });
  for (const auto& f : flag_names) cl.flag(f, a.flags[f]);
  cl.exclusive({"--device", "--cpu"});
  if (auto rc = cl.parse(argc, argv)) return rc;
  std::erase_if(a.flags, [](const auto& f) { return !f.second; });
  // --device N: the GPU to run on (CUDA's numbering; the default is 0). A
  // GPU this machine lacks is a failure of the run, as with the engine's
  // --devices, not a usage error.
  if (const auto it = a.values.find("--device"); it != a.values.end()) {
    const std::string& text = it->second;
    if (!parse_integer(text, 0, 1023))
      return cl.usage_error(integer_problem("--device", text, 0, 1023));
    const int gpus = devices::cuda_device_count();
    if (gpus == 0) return cl.failure("--device " + text + ": this machine has no CUDA device");
    const auto d = parse_integer(text, 0, gpus - 1);
    if (!d) return cl.failure(integer_problem("--device", text, 0, gpus - 1));
    if (const cudaError_t e = cudaSetDevice(*d))
      return cl.failure(cuda_message("--device " + text, e));
  }
  return std::nullopt;
}

std::optional<unsigned> parse_log_n(const std::string& s) {
  return parse_integer(s, 1u, kernels::kMaxLogN);
}

int usage(const std::string& name, const std::string& problem, const char* synopsis) {
  std::cerr << "stoker " << name << ": " << problem << "\nusage: " << synopsis << "\n";
  return 2;
}

// ---- files -----------------------------------------------------------------

// Reads a file of canonical elements. `log_n` (if given) fixes the size;
// otherwise the size must be 32 * 2^K for some K and K is returned.
bool read_elements(const std::string& path, std::optional<unsigned>& log_n, std::vector<Fr>& out,
                   std::string& error) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) {
    error = path + ": cannot read (" + ec.message() + ")";
    return false;
  }
  if (log_n) {
    const std::uint64_t want = std::uint64_t{32} << *log_n;
    if (size != want) {
      error = path + ": size is " + std::to_string(size) + " bytes, expected 32 * 2^" +
              std::to_string(*log_n) + " = " + std::to_string(want);
      return false;
    }
  } else {
    const std::uint64_t n = size / 32;
    if (size % 32 || n < 2 || (n & (n - 1)) || n > (std::uint64_t{1} << kernels::kMaxLogN)) {
      error = path + ": size is " + std::to_string(size) +
              " bytes, not 32 * 2^K for some K in 1.." + std::to_string(kernels::kMaxLogN);
      return false;
    }
    unsigned k = 0;
    while ((std::uint64_t{1} << k) < n) ++k;
    log_n = k;
  }
  const std::size_t n = std::size_t{1} << *log_n;
  std::ifstream f(path, std::ios::binary);
  std::vector<unsigned char> bytes(n * 32);
  if (!f.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()))) {
    error = path + ": read failed";
    return false;
  }
  out.resize(n);
  for (std::size_t i = 0; i < n; ++i)
    if (!Fr::from_bytes(&bytes[32 * i], out[i])) {
      error = path + ": element " + std::to_string(i) + " is not below r (not canonical)";
      return false;
    }
  return true;
}

// Writes the elements through OutputFile: whole or not at all, through a
// symlink, never over a FIFO or a device.
bool write_elements(const OutputFile& out, const std::vector<Fr>& v, std::string& error) {
  std::string bytes(v.size() * 32, '\0');
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i].to_bytes(reinterpret_cast<unsigned char*>(&bytes[32 * i]));
  if (auto e = out.write(bytes)) {
    error = e.what();
    return false;
  }
  return true;
}

// ---- device helpers ----------------------------------------------------------

// The GPU a command runs on, through devices/: the set that owns it and one
// stream for every copy, kernel and timing event, so nothing runs on the
// default stream.
struct Gpu {
  devices::DeviceSet set;
  devices::Stream stream;
  devices::Device& device() const { return set[0]; }
  cudaStream_t native() const { return static_cast<cudaStream_t>(stream.native()); }
};

// The device --device names (already checked by parse), 0 without it.
int device_ordinal(const Args& a) {
  const auto it = a.values.find("--device");
  if (it == a.values.end()) return 0;
  return parse_integer(it->second, 0, std::numeric_limits<int>::max()).value_or(0);
}

Result<Gpu> open_gpu(const Args& a) {
  devices::DiscoverOptions options;
  options.backend = devices::BackendChoice::cuda;
  options.cuda_ordinals = {device_ordinal(a)};
  auto set = devices::discover(options);
  if (!set) return std::move(set).error();
  devices::Device& device = (*set)[0];
  if (auto ec = device.make_current()) return Error{ec, "GPU " + std::to_string(device.index())};
  auto stream = device.create_stream();
  if (!stream) return std::move(stream).error();
  return Gpu{std::move(*set), std::move(*stream)};
}

// Room for `bytes` of data on the device (with 5 % and 64 MiB to spare
// for tables and the runtime).
bool check_device_room(devices::Device& device, std::size_t bytes, std::string& error) {
  const auto info = device.memory_info();
  if (!info) {
    error = "cannot query device memory (" + info.error().what() + ")";
    return false;
  }
  const std::size_t need = bytes + bytes / 20 + (std::size_t{64} << 20);
  if (need > info->free) {
    error = "needs about " + std::to_string(need >> 20) + " MiB of device memory, the device has " +
            std::to_string(info->free >> 20) + " MiB free of " + std::to_string(info->total >> 20);
    return false;
  }
  return true;
}

// `n` elements of device memory.
Result<devices::DeviceBuffer> allocate_elements(devices::Device& device, std::size_t n) {
  return device.allocate(n * sizeof(Fr));
}

// Copies `bytes` between host memory the caller owns and the device on the
// GPU's stream, page-locking the host range for the copy (devices/ DMAs only
// from page-locked memory), and waits for it.
std::error_code copy_and_wait(Gpu& gpu, void* dst, const void* src, std::size_t bytes, void* host,
                              std::string& error) {
  auto locked = devices::register_host(devices::Backend::cuda, host, bytes);
  if (!locked) {
    error = locked.error().what();
    return locked.error().code;
  }
  std::error_code ec = gpu.stream.copy(dst, src, bytes);
  if (!ec) ec = gpu.stream.synchronize();
  if (ec) error = "copy of " + std::to_string(bytes) + " bytes: " + ec.message();
  return ec;
}

std::error_code upload(Gpu& gpu, void* device_dst, const void* host_src, std::size_t bytes,
                       std::string& error) {
  return copy_and_wait(gpu, device_dst, host_src, bytes, const_cast<void*>(host_src), error);
}

std::error_code download(Gpu& gpu, void* host_dst, const void* device_src, std::size_t bytes,
                         std::string& error) {
  return copy_and_wait(gpu, host_dst, device_src, bytes, host_dst, error);
}

bool use_gpu(const Args& a) {
  return !a.flags.count("--cpu") && devices::cuda_device_count() > 0;
}

std::vector<Fr> random_elements(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Fr> v(n);
  for (auto& x : v)
    for (;;) {
      std::uint64_t l[4] = {rng(), rng(), rng(), rng() & 0x7fffffffffffffffull};
      if (Fr::is_canonical(l)) {
        x = Fr::from_canonical(l);
        break;
      }
    }
  return v;
}

// ---- benchmarks ----------------------------------------------------------------

struct Anchor {
  unsigned log_n;
  double ntt_ms, hpoly_ms;
};
// sppark on one H200 (docs/BENCHMARKS.md): forward NTT natural/natural and the
// seven NTTs of hpoly, device-resident, CUDA events.
constexpr Anchor kAnchors[] = {{20, 0.27, 2.0}, {24, 4.7, 34}, {26, 23.8, 166}, {27, 44.4, 323}};

std::optional<Anchor> anchor_for(unsigned log_n) {
  for (const auto& a : kAnchors)
    if (a.log_n == log_n) return a;
  return std::nullopt;
}

// Passes over memory per natural-order NTT of this implementation
// (kernels/detail/ntt_gpu.hpp): the DIF passes plus the bit reversal.
unsigned ntt_passes(unsigned log_n) {
  if (log_n <= 11) return 1;
  return 1 + (log_n - 11 + 9) / 10 + 1;
}

double peak_bandwidth_bytes_per_s(const devices::Device& device) {
  int khz = 0, bits = 0;
  const int ordinal = device.info().ordinal;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, ordinal) ||
      cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, ordinal) || !khz || !bits) {
    cudaGetLastError();
    return 4.8e12;  // H200 datasheet
  }
  return 2.0 * khz * 1e3 * bits / 8.0;
}

struct BenchRow {
  unsigned log_n;
  double ms;
  double modmuls;      // nominal radix-2 butterfly multiplications
  double bytes;        // moved by this implementation
  double floor_bytes;  // one read and one write of every vector touched
};

// Median of `reps` runs of `body` on the GPU's stream after two warm-up runs,
// timed by timing events on that stream.
template <typename Body>
std::optional<double> time_gpu(Gpu& gpu, int reps, Body&& body, std::string& error) {
  auto start = gpu.device().create_event(devices::EventKind::timing);
  auto stop = gpu.device().create_event(devices::EventKind::timing);
  if (!start || !stop) {
    error = "timing events: " + (start ? stop : start).error().what();
    return std::nullopt;
  }
  std::vector<double> times;
  for (int r = -2; r < reps; ++r) {
    std::error_code ec = gpu.stream.record(*start);
    if (!ec) ec = body();
    if (!ec) ec = gpu.stream.record(*stop);
    if (!ec) ec = stop->synchronize();
    if (ec) {
      error = ec.message();
      return std::nullopt;
    }
    const auto ms = devices::elapsed_ms(*start, *stop);
    if (!ms) {
      error = ms.error().what();
      return std::nullopt;
    }
    if (r >= 0) times.push_back(*ms);
  }
  return median(times);
}

template <typename Body>
double time_cpu(int reps, Body&& body) {
  std::vector<double> times;
  for (int r = -1; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    body();
    const auto t1 = std::chrono::steady_clock::now();
    if (r >= 0) times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return median(times);
}

void print_rows(const char* what, const std::vector<BenchRow>& rows, bool json, bool gpu, double bw,
                bool hpoly) {
  if (json) {
    Json out = Json::array();
    for (const auto& r : rows) {
      const auto anchor = anchor_for(r.log_n);
      out.push_back({{"bench", what},
                     {"backend", gpu ? "gpu" : "cpu"},
                     {"log_n", r.log_n},
                     {"ms", r.ms},
                     {"modmuls_per_s", r.modmuls / (r.ms * 1e-3)},
                     {"bytes_moved", r.bytes},
                     {"bandwidth_floor_ms", gpu ? r.bytes / bw * 1e3 : 0},
                     {"one_pass_floor_ms", gpu ? r.floor_bytes / bw * 1e3 : 0},
                     {"sppark_ms",
                      anchor ? Json(hpoly ? anchor->hpoly_ms : anchor->ntt_ms) : Json(nullptr)}});
    }
    std::cout << json_text(out) << "\n";
    return;
  }
  std::printf("%s on %s%s\n", what, gpu ? "GPU" : "CPU",
              gpu ? " (device-resident, CUDA events, median)" : " (median)");
  if (gpu) std::printf("peak memory bandwidth %.2f TB/s\n", bw / 1e12);
  std::printf("%6s %10s %14s %12s %12s %12s %10s\n", "log_n", "ms", "modmul/s", "GB moved",
              "floor ms", "1-pass ms", "sppark ms");
  for (const auto& r : rows) {
    const auto anchor = anchor_for(r.log_n);
    char anchor_s[32] = "-";
    if (anchor)
      std::snprintf(anchor_s, sizeof anchor_s, "%.2f", hpoly ? anchor->hpoly_ms : anchor->ntt_ms);
    std::printf("%6u %10.3f %14.3e %12.3f %12.3f %12.3f %10s\n", r.log_n, r.ms,
                r.modmuls / (r.ms * 1e-3), r.bytes / 1e9, gpu ? r.bytes / bw * 1e3 : 0.0,
                gpu ? r.floor_bytes / bw * 1e3 : 0.0, anchor_s);
  }
  std::printf(
      "modmul/s counts n/2 * log2 n butterfly multiplications per NTT; floor ms = bytes moved by "
      "these kernels at peak bandwidth; 1-pass ms = one read and one write of the data.\n");
}

int bench(int argc, char** argv, bool hpoly) {
  const char* synopsis =
      hpoly ? "stoker bench hpoly [--log-n 20,24,26] [--reps N] [--json] [--cpu | --device N]"
            : "stoker bench ntt [--log-n 20,24,26] [--reps N] [--json] [--cpu | --device N]";
  const std::string name = hpoly ? "bench hpoly" : "bench ntt";
  const std::string help =
      std::string("usage: ") + synopsis + "\n" +
      (hpoly ? "Times the H polynomial (7 NTTs and the pointwise step) device-resident.\n"
             : "Times the forward NTT (natural order in and out) device-resident.\n") +
      "  --log-n K,K,...  sizes 2^K, K in 1.." + std::to_string(kernels::kMaxLogN) +
      " (default 20,24,26)\n"
      "  --reps N         timed repetitions, median reported (default 10)\n"
      "  --json           one JSON array of rows\n"
      "  --cpu            the CPU version instead of the GPU\n"
      "  --device N       the GPU (default 0)\n";
  Args a;
  if (auto rc = parse(name, help, argc, argv, a, {"--log-n", "--reps"}, {"--json", "--cpu"}))
    return *rc;
  std::vector<unsigned> sizes;
  {
    std::stringstream ss(a.values.count("--log-n") ? a.values["--log-n"] : "20,24,26");
    std::string item;
    while (std::getline(ss, item, ',')) {
      auto k = parse_log_n(item);
      if (!k) return usage(name, integer_problem("--log-n", item, 1u, kernels::kMaxLogN), synopsis);
      sizes.push_back(*k);
    }
  }
  int reps = 10;
  if (a.values.count("--reps")) {
    const std::string& text = a.values["--reps"];
    const auto n = parse_integer(text, 1, std::numeric_limits<int>::max());
    if (!n)
      return usage(name, integer_problem("--reps", text, 1, std::numeric_limits<int>::max()),
                   synopsis);
    reps = *n;
  }
  const bool json = a.flags.count("--json") > 0;
  std::optional<Gpu> gpu;
  if (use_gpu(a)) {
    auto opened = open_gpu(a);
    if (!opened) {
      std::cerr << "stoker " << name << ": " << opened.error().what() << "\n";
      return 1;
    }
    gpu.emplace(std::move(*opened));
  }
  const double bw = gpu ? peak_bandwidth_bytes_per_s(gpu->device()) : 0;
  std::vector<BenchRow> rows;
  for (unsigned k : sizes) {
    const std::size_t n = std::size_t{1} << k;
    const double elem = 32.0 * n;
    const double ntt_muls = 0.5 * n * k;
    const unsigned p = ntt_passes(k);
    BenchRow row{k, 0, hpoly ? 7 * ntt_muls : ntt_muls, 0, hpoly ? 4 * elem + 2 * elem : 2 * elem};
    // Per pass one read and one write; hpoly: 7 NTTs share one final bit
    // reversal, and the pointwise step reads two more vectors.
    row.bytes = hpoly ? (k <= 11 ? (7.0 * 2 + 4) * elem : (7.0 * (p - 1) + 1) * 2 * elem + 2 * elem)
                      : p * 2 * elem;
    const auto host = random_elements(hpoly ? 3 * n : n, 42 + k);
    std::string error;
    if (gpu) {
      if (!check_device_room(gpu->device(), (hpoly ? 4 : 1) * n * sizeof(Fr), error)) {
        std::cerr << "stoker " << name << ": 2^" << k << ": " << error << "\n";
        return 1;
      }
      // hpoly: a, b, c then h; ntt: the one vector, in place.
      auto data = allocate_elements(gpu->device(), host.size() + (hpoly ? n : 0));
      if (!data) {
        std::cerr << "stoker " << name << ": 2^" << k << ": " << data.error().what() << "\n";
        return 1;
      }
      Fr* d = data->as<Fr>();
      Fr* h = d + host.size();
      if (upload(*gpu, d, host.data(), host.size() * sizeof(Fr), error)) {
        std::cerr << "stoker " << name << ": 2^" << k << ": " << error << "\n";
        return 1;
      }
      if (auto ec = kernels::gpu::prepare(k)) {
        std::cerr << "stoker " << name << ": " << ec.message() << "\n";
        return 1;
      }
      const cudaStream_t stream = gpu->native();
      std::optional<double> ms;
      if (hpoly)
        ms = time_gpu(
            *gpu, reps, [&] { return kernels::gpu::hpoly(h, d, d + n, d + 2 * n, k, stream); },
            error);
      else
        ms = time_gpu(
            *gpu, reps, [&] { return kernels::gpu::ntt(d, d, k, 1, stream); }, error);
      if (!ms) {
        std::cerr << "stoker " << name << ": 2^" << k << ": " << error << "\n";
        return 1;
      }
      row.ms = *ms;
    } else {
      std::vector<Fr> work(host), h(hpoly ? n : 0);
      if (hpoly)
        row.ms = time_cpu(reps, [&] {
          kernels::cpu::hpoly(h.data(), work.data(), work.data() + n, work.data() + 2 * n, k);
        });
      else
        row.ms = time_cpu(reps, [&] { kernels::cpu::ntt(work.data(), work.data(), k); });
      row.bytes = 0;
    }
    rows.push_back(row);
  }
  print_rows(hpoly ? "hpoly (7 NTTs + pointwise)" : "ntt (forward, natural/natural)", rows, json,
             gpu.has_value(), bw, hpoly);
  return 0;
}

}  // namespace

int ntt_command(int argc, char** argv) {
  const char* synopsis =
      "stoker ntt --log-n K --in FILE --out FILE [--inverse] [--coset] [--cpu | --device N]";
  const std::string help =
      std::string("usage: ") + synopsis +
      "\nThe NTT of a file of 2^K BLS12-381 scalars (32 bytes each, little-endian, canonical).\n"
      "  --log-n K    the size, K in 1.." +
      std::to_string(kernels::kMaxLogN) +
      "\n"
      "  --in FILE    the scalars\n"
      "  --out FILE   where the result goes (written whole or not at all; through a symlink)\n"
      "  --inverse    the inverse NTT\n"
      "  --coset      on the coset (the multiplicative generator times the roots)\n"
      "  --cpu        the CPU version instead of the GPU\n"
      "  --device N   the GPU (default 0)\n";
  Args a;
  if (auto rc = parse("ntt", help, argc, argv, a, {"--log-n", "--in", "--out"},
                      {"--inverse", "--coset", "--cpu"}))
    return *rc;
  for (const char* req : {"--log-n", "--in", "--out"})
    if (!a.values.count(req)) return usage("ntt", std::string("missing ") + req, synopsis);
  auto out = OutputFile::check(a.values["--out"]);
  if (!out) return usage("ntt", "--out: " + out.error().what(), synopsis);
  std::optional<unsigned> log_n = parse_log_n(a.values["--log-n"]);
  if (!log_n)
    return usage("ntt",
                 "--log-n must be an integer in 1.." + std::to_string(kernels::kMaxLogN) +
                     ", not '" + a.values["--log-n"] + "'",
                 synopsis);
  const bool inverse = a.flags.count("--inverse") > 0, coset = a.flags.count("--coset") > 0;
  const NttKind kind = coset ? (inverse ? NttKind::coset_inverse : NttKind::coset_forward)
                             : (inverse ? NttKind::inverse : NttKind::forward);
  std::vector<Fr> x;
  std::string error;
  if (!read_elements(a.values["--in"], log_n, x, error)) {
    std::cerr << "stoker ntt: " << error << "\n";
    return 1;
  }
  const std::size_t n = x.size();
  if (use_gpu(a)) {
    auto gpu = open_gpu(a);
    if (!gpu) {
      std::cerr << "stoker ntt: " << gpu.error().what() << "\n";
      return 1;
    }
    if (!check_device_room(gpu->device(), n * sizeof(Fr), error)) {
      std::cerr << "stoker ntt: 2^" << *log_n << " elements: " << error << "\n";
      return 1;
    }
    auto data = allocate_elements(gpu->device(), n);
    if (!data) {
      std::cerr << "stoker ntt: " << data.error().what() << "\n";
      return 1;
    }
    Fr* d = data->as<Fr>();
    if (upload(*gpu, d, x.data(), n * sizeof(Fr), error)) {
      std::cerr << "stoker ntt: " << error << "\n";
      return 1;
    }
    if (auto ec = kernels::gpu::transform(kind, d, d, *log_n, 1, gpu->native())) {
      std::cerr << "stoker ntt: " << ec.message() << "\n";
      return 1;
    }
    if (download(*gpu, x.data(), d, n * sizeof(Fr), error)) {
      std::cerr << "stoker ntt: " << error << "\n";
      return 1;
    }
  } else {
    kernels::cpu::transform(kind, x.data(), x.data(), *log_n);
  }
  if (!write_elements(*out, x, error)) {
    std::cerr << "stoker ntt: " << error << "\n";
    return 1;
  }
  return 0;
}

int hpoly_command(int argc, char** argv) {
  const char* synopsis = "stoker hpoly --a FILE --b FILE --c FILE --out FILE [--cpu | --device N]";
  const std::string help =
      std::string("usage: ") + synopsis +
      "\nThe Groth16 H polynomial of files a, b, c of 2^K BLS12-381 scalars each (32 bytes,\n"
      "little-endian, canonical): h = (AB - C) / Z on the coset, back in coefficients.\n"
      "  --a FILE, --b FILE, --c FILE   the evaluations, all of one size\n"
      "  --out FILE   where h goes (written whole or not at all; through a symlink)\n"
      "  --cpu        the CPU version instead of the GPU\n"
      "  --device N   the GPU (default 0)\n";
  Args a;
  if (auto rc = parse("hpoly", help, argc, argv, a, {"--a", "--b", "--c", "--out"}, {"--cpu"}))
    return *rc;
  for (const char* req : {"--a", "--b", "--c", "--out"})
    if (!a.values.count(req)) return usage("hpoly", std::string("missing ") + req, synopsis);
  auto out = OutputFile::check(a.values["--out"]);
  if (!out) return usage("hpoly", "--out: " + out.error().what(), synopsis);
  std::vector<Fr> va, vb, vc;
  std::string error;
  std::optional<unsigned> log_n;
  if (!read_elements(a.values["--a"], log_n, va, error)) {
    std::cerr << "stoker hpoly: " << error << "\n";
    return 1;
  }
  for (auto [flag, vec] : {std::pair{"--b", &vb}, std::pair{"--c", &vc}}) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(a.values[flag], ec);
    if (!ec && size != va.size() * 32) {
      std::cerr << "stoker hpoly: size mismatch: " << a.values["--a"] << " has " << va.size() * 32
                << " bytes, " << a.values[flag] << " has " << size << "\n";
      return 1;
    }
    if (!read_elements(a.values[flag], log_n, *vec, error)) {
      std::cerr << "stoker hpoly: " << error << "\n";
      return 1;
    }
  }
  const std::size_t n = va.size();
  std::vector<Fr> h(n);
  if (use_gpu(a)) {
    auto gpu = open_gpu(a);
    if (!gpu) {
      std::cerr << "stoker hpoly: " << gpu.error().what() << "\n";
      return 1;
    }
    if (!check_device_room(gpu->device(), 3 * n * sizeof(Fr), error)) {
      std::cerr << "stoker hpoly: 2^" << *log_n << " elements: " << error << "\n";
      return 1;
    }
    auto data = allocate_elements(gpu->device(), 3 * n);
    if (!data) {
      std::cerr << "stoker hpoly: " << data.error().what() << "\n";
      return 1;
    }
    Fr* d = data->as<Fr>();
    for (auto [v, off] : {std::pair{&va, 0}, std::pair{&vb, 1}, std::pair{&vc, 2}})
      if (upload(*gpu, d + off * n, v->data(), n * sizeof(Fr), error)) {
        std::cerr << "stoker hpoly: " << error << "\n";
        return 1;
      }
    if (auto ec = kernels::gpu::hpoly(d + 2 * n, d, d + n, d + 2 * n, *log_n, gpu->native())) {
      std::cerr << "stoker hpoly: " << ec.message() << "\n";
      return 1;
    }
    if (download(*gpu, h.data(), d + 2 * n, n * sizeof(Fr), error)) {
      std::cerr << "stoker hpoly: " << error << "\n";
      return 1;
    }
  } else {
    kernels::cpu::hpoly(h.data(), va.data(), vb.data(), vc.data(), *log_n);
  }
  if (!write_elements(*out, h, error)) {
    std::cerr << "stoker hpoly: " << error << "\n";
    return 1;
  }
  return 0;
}

int bench_ntt_command(int argc, char** argv) {
  return bench(argc, argv, false);
}
int bench_hpoly_command(int argc, char** argv) {
  return bench(argc, argv, true);
}

}  // namespace stoker::tools
