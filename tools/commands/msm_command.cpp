// `stoker msm`; see msm_command.hpp.
#include "tools/commands/msm_command.hpp"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "common/host_memory_limit.hpp"
#include "devices/device_set.hpp"
#include "devices/pinned_buffer.hpp"
#include "devices/stream.hpp"
#include "engine/g1_file.hpp"
#include "engine/g2_file.hpp"
#include "kernels/detail/msm_group.hpp"
#include "kernels/g1_encoding.hpp"
#include "kernels/g2_encoding.hpp"
#include "kernels/msm.hpp"
#include "tools/cli/command_line.hpp"
#include "tools/cli/counted.hpp"
#include "tools/cli/input_file.hpp"
#include "tools/cli/memory_guard.hpp"
#include "tools/cli/output_file.hpp"

namespace stoker::tools {
namespace {

using kernels::Fr;
using kernels::G1Affine;
using kernels::G2Affine;
using kernels::detail::MsmGroupTraits;
using kernels::detail::XyzzOf;

constexpr const char* kHelp =
    "usage: stoker msm --points FILE --scalars FILE --out FILE [--group g1|g2]\n"
    "                  [--cpu | --device N] [--trust-points]\n"
    "\n"
    "Writes sum_i s_i P_i over G1 or G2 of BLS12-381.\n"
    "  --points FILE    points in the uncompressed zcash/IETF encoding, byte 0 holding\n"
    "                   the flags: 0x80 clear, 0x40 infinity (every other bit zero), 0x20 clear\n"
    "                   G1: 96 bytes each, big-endian x then y\n"
    "                   G2: 192 bytes each, x.c1, x.c0, y.c1, y.c0, each 48 bytes big-endian\n"
    "  --scalars FILE   scalars, 32 bytes each: little-endian integers below r\n"
    "  --out FILE       the result, one point in the points' encoding; not one of the inputs\n"
    "  --group g1|g2    the points' group (default g1)\n"
    "  --cpu            run on the CPU even where a GPU exists\n"
    "  --device N       the GPU to run on (CUDA's numbering; default 0)\n"
    "  --trust-points   skip the check that every point is in its group, and for G1 on\n"
    "                   its curve (G2 points are checked on E' as they are read)\n"
    "\n"
    "Every input is checked before the sum; an error names the file and a bad\n"
    "element's index, and leaves no output file. Encodings are checked as they are\n"
    "read (flags, coordinates below q, G2 points on E'), curves and groups after (the\n"
    "first 4096 points' before the rest is read; G1 points on the GPU when one is\n"
    "used, G2 points on every CPU thread). Where points fail different checks, the\n"
    "one named is the first its check met, which may not be the lowest index.\n";

// Points read and checked before anything is allocated for the whole file.
constexpr std::size_t kHeadPoints = 4096;

// Scalar bytes read and decoded at a time, so a file is never held twice
// (the point files are read the same way).
constexpr std::size_t kChunkBytes = std::size_t{96} << 20;

// What the command needs of a group beyond MsmGroupTraits: its point file,
// its point check and its encoding.
template <typename Affine>
struct GroupFile;

template <>
struct GroupFile<G1Affine> {
  static constexpr std::size_t kEncodedBytes = kernels::kG1EncodedBytes;
  // gpu::check_points checks G1 points where they lie on the device.
  static constexpr bool kGpuCheck = true;
  static Result<std::size_t> points(const std::string& path) {
    return engine::g1_file_points(path);
  }
  static Error read(const std::string& path, std::span<G1Affine> out) {
    return engine::read_g1_file(path, out);
  }
  static std::error_code check(const G1Affine& p) { return kernels::check_g1(p); }
  static void encode(const G1Affine& p, unsigned char* bytes) { kernels::encode_g1(p, bytes); }
};

template <>
struct GroupFile<G2Affine> {
  static constexpr std::size_t kEncodedBytes = kernels::kG2EncodedBytes;
  // The kernels have no GPU point check for G2.
  static constexpr bool kGpuCheck = false;
  static Result<std::size_t> points(const std::string& path) {
    return engine::g2_file_points(path);
  }
  static Error read(const std::string& path, std::span<G2Affine> out) {
    return engine::read_g2_file(path, out);
  }
  static std::error_code check(const G2Affine& p) { return kernels::check_g2(p); }
  static void encode(const G2Affine& p, unsigned char* bytes) { kernels::encode_g2(p, bytes); }
};

// The number of `element`-byte elements in `path`.
std::optional<std::size_t> count_elements(const std::string& path, std::size_t element,
                                          const char* what, std::string& error) {
  const auto sized = input_size(path);
  if (!sized) {
    error = sized.error().what();
    return std::nullopt;
  }
  const std::uint64_t size = *sized;
  if (size % element) {
    error = path + ": size is " + std::to_string(size) + " bytes, not a multiple of " +
            std::to_string(element) + " (" + what + ")";
    return std::nullopt;
  }
  return static_cast<std::size_t>(size / element);
}

// Reads `n` elements of `element` bytes in chunks and hands each to
// decode(index, bytes), which returns false (having set `error`) to stop.
template <typename Decode>
bool read_elements(const std::string& path, std::size_t n, std::size_t element, Decode&& decode,
                   std::string& error) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    error = path + ": cannot open";
    return false;
  }
  const std::size_t per_chunk = kChunkBytes / element;
  std::vector<unsigned char> buf(std::min(n, per_chunk) * element);
  for (std::size_t first = 0; first < n; first += per_chunk) {
    const std::size_t count = std::min(per_chunk, n - first);
    if (!f.read(reinterpret_cast<char*>(buf.data()),
                static_cast<std::streamsize>(count * element))) {
      error = path + ": read failed at element " + std::to_string(first);
      return false;
    }
    for (std::size_t i = 0; i < count; ++i)
      if (!decode(first + i, &buf[i * element])) return false;
  }
  return true;
}

// Copies between host memory the caller owns and the device, page-locking
// the host range for the copy as devices/ requires, and waits.
std::error_code copy_and_wait(devices::Stream& stream, void* dst, const void* src,
                              std::size_t bytes, void* host) {
  auto locked = devices::register_host(devices::Backend::cuda, host, bytes);
  if (!locked) return locked.error().code;
  if (auto ec = stream.copy(dst, src, bytes)) return ec;
  return stream.synchronize();
}

// The GPU path: upload, check the points when `check_on_gpu` (a group with
// a GPU check only), the MSM, the result back. A bad point sets
// `bad_point` and returns no error.
template <typename Affine>
Error msm_gpu(int ordinal, const std::vector<Affine>& points, const std::vector<Fr>& scalars,
              bool check_on_gpu, std::optional<std::size_t>& bad_point, XyzzOf<Affine>& result) {
  using Xyzz = XyzzOf<Affine>;
  const std::size_t n = points.size();
  devices::DiscoverOptions options;
  options.backend = devices::BackendChoice::cuda;
  options.cuda_ordinals = {ordinal};
  auto set = devices::discover(options);
  if (!set) return std::move(set).error();
  devices::Device& device = (*set)[0];
  if (auto ec = device.make_current()) return Error{ec, "GPU " + std::to_string(ordinal)};
  auto stream = device.create_stream();
  if (!stream) return std::move(stream).error();
  const auto native = static_cast<cudaStream_t>(stream->native());

  kernels::gpu::MsmPlan plan;
  if (auto ec = kernels::gpu::plan_msm(MsmGroupTraits<Affine>::kGroup, n, ordinal, plan))
    return Error{
        ec, "no MSM plan for " + std::to_string(n) + " points on GPU " + std::to_string(ordinal)};
  auto d_points = device.allocate(n * sizeof(Affine));
  if (!d_points) return std::move(d_points).error();
  auto d_scalars = device.allocate(n * sizeof(Fr));
  if (!d_scalars) return std::move(d_scalars).error();
  auto d_scratch = device.allocate(plan.scratch_bytes);
  if (!d_scratch) return std::move(d_scratch).error();
  auto d_out = device.allocate(sizeof(Xyzz) + sizeof(std::uint64_t));
  if (!d_out) return std::move(d_out).error();
  auto* d_result = static_cast<Xyzz*>(d_out->data());

  auto* host_points = const_cast<Affine*>(points.data());
  auto* host_scalars = const_cast<Fr*>(scalars.data());
  if (auto ec =
          copy_and_wait(*stream, d_points->data(), host_points, n * sizeof(Affine), host_points))
    return Error{ec, "copying the points to GPU " + std::to_string(ordinal)};
  if constexpr (GroupFile<Affine>::kGpuCheck) {
    if (check_on_gpu) {
      auto* d_first_bad =
          reinterpret_cast<std::uint64_t*>(static_cast<char*>(d_out->data()) + sizeof(Xyzz));
      std::uint64_t first_bad = n;
      auto* d_points_typed = static_cast<const Affine*>(d_points->data());
      if (auto ec = kernels::gpu::check_points(d_first_bad, d_points_typed, n, native))
        return Error{ec, "checking the points on GPU " + std::to_string(ordinal)};
      if (auto ec = copy_and_wait(*stream, &first_bad, d_first_bad, sizeof first_bad, &first_bad))
        return Error{ec, "checking the points on GPU " + std::to_string(ordinal)};
      if (first_bad < n) {
        bad_point = static_cast<std::size_t>(first_bad);
        return {};
      }
    }
  }
  if (auto ec =
          copy_and_wait(*stream, d_scalars->data(), host_scalars, n * sizeof(Fr), host_scalars))
    return Error{ec, "copying the scalars to GPU " + std::to_string(ordinal)};
  if (auto ec = kernels::gpu::msm(plan, d_result, static_cast<const Affine*>(d_points->data()),
                                  static_cast<const Fr*>(d_scalars->data()), d_scratch->data(),
                                  plan.scratch_bytes, native))
    return Error{ec, "MSM of " + std::to_string(n) + " points on GPU " + std::to_string(ordinal)};
  if (auto ec = copy_and_wait(*stream, &result, d_result, sizeof result, &result))
    return Error{ec, "MSM of " + std::to_string(n) + " points on GPU " + std::to_string(ordinal)};
  return {};
}

struct MsmInputs {
  std::string points_path, scalars_path;
  bool use_gpu = false;
  int device = 0;
  bool trust_points = false;
};

// The command once its command line is read, for the points' group.
template <typename Affine>
int msm_of_group(const CommandLine& cl, const MsmInputs& in, const OutputFile& out) {
  using File = GroupFile<Affine>;
  using Xyzz = XyzzOf<Affine>;
  const std::string& points_path = in.points_path;
  const std::string& scalars_path = in.scalars_path;
  const auto problem = [&](std::size_t index, const Affine& p) {
    return cl.failure(points_path + ": point " + std::to_string(index) + ": " +
                      File::check(p).message());
  };

  // Sizes and counts first: nothing is read when they do not match.
  std::string error;
  const auto n_points = File::points(points_path);
  if (!n_points) return cl.failure(n_points.error().what());
  const auto n_scalars = count_elements(scalars_path, 32, "32-byte scalars", error);
  if (!n_scalars) return cl.failure(error);
  if (*n_points != *n_scalars)
    return cl.failure(points_path + " holds " + counted(*n_points, "point") + " but " +
                      scalars_path + " holds " + counted(*n_scalars, "scalar"));
  const std::size_t n = *n_points;

  // A file that is not points at all fails at its first points, before
  // gigabytes of memory are allocated and filled for the rest.
  {
    std::vector<Affine> head(std::min<std::size_t>(n, kHeadPoints));
    if (Error e = File::read(points_path, head)) return cl.failure(e.what());
    if (!in.trust_points)
      if (const std::size_t bad = kernels::cpu::check_points(head.data(), head.size());
          bad < head.size())
        return problem(bad, head[bad]);
  }
  const std::string what = "the MSM of " + counted(n, "point");
  // The points and their scalars.
  const std::size_t need = n * (sizeof(Affine) + sizeof(Fr));
  if (Error e = common::check_host_memory(what, need)) return cl.failure(e.what());
  std::vector<Fr> scalars;
  std::vector<Affine> points;
  try {
    scalars.resize(n);
    points.resize(n);
  } catch (const std::bad_alloc&) {
    return cl.failure(common::host_memory_refused(what, need).what());
  }
  // The points first: a file that is not points at all fails at its first
  // point, before a byte of the scalars is read.
  if (Error e = File::read(points_path, points)) return cl.failure(e.what());
  const bool scalars_ok = read_elements(
      scalars_path, n, 32,
      [&](std::size_t i, const unsigned char* b) {
        if (Fr::from_bytes(b, scalars[i])) return true;
        error = scalars_path + ": scalar " + std::to_string(i) + " is not below r";
        return false;
      },
      error);
  if (!scalars_ok) return cl.failure(error);

  const bool gpu = in.use_gpu && n > 0;
  // Points are checked on the GPU where it can (G1). G2 has no GPU check:
  // its points are checked here, on every CPU thread, before they go to
  // the GPU, as they are for the CPU's MSM.
  const bool check_on_gpu = gpu && File::kGpuCheck && !in.trust_points;
  if (!in.trust_points && !check_on_gpu)
    if (const std::size_t bad = kernels::cpu::check_points(points.data(), n); bad < n)
      return problem(bad, points[bad]);
  Xyzz sum = Xyzz::infinity();
  if (gpu) {
    std::optional<std::size_t> bad;
    if (Error e = msm_gpu(in.device, points, scalars, check_on_gpu, bad, sum))
      return cl.failure(e.what());
    if (bad) return problem(*bad, points[*bad]);
  } else {
    sum = kernels::cpu::msm(points.data(), scalars.data(), n);
  }

  std::string bytes(File::kEncodedBytes, '\0');
  File::encode(kernels::to_affine(sum), reinterpret_cast<unsigned char*>(bytes.data()));
  if (Error e = out.write(bytes)) return cl.failure(e.what());
  return 0;
}

int msm(int argc, char** argv) {
  CommandLine cl("msm", kHelp);
  MsmInputs in;
  std::string out_path, group = "g1";
  bool cpu = false;
  std::optional<int> device;
  cl.value("--points", in.points_path);
  cl.value("--scalars", in.scalars_path);
  cl.value("--out", out_path);
  cl.choice("--group", group, {"g1", "g2"});
  cl.flag("--cpu", cpu);
  cl.gpu("--device", device);
  cl.flag("--trust-points", in.trust_points);
  cl.exclusive({"--cpu", "--device"});
  if (auto rc = cl.parse(argc, argv)) return *rc;
  if (in.points_path.empty()) return cl.usage_error("--points is required");
  if (in.scalars_path.empty()) return cl.usage_error("--scalars is required");
  if (out_path.empty()) return cl.usage_error("--out is required");
  in.use_gpu = !cpu && devices::cuda_device_count() > 0;
  in.device = device.value_or(0);
  // An input that is missing or not a regular file is a usage error, as in
  // `stoker prove`, found before any work.
  for (const auto& path : {in.points_path, in.scalars_path})
    if (const auto sized = input_size(path); !sized) return cl.usage_error(sized.error().what());
  auto out = OutputFile::check(out_path);
  if (!out) return cl.usage_error(out.error().what());
  for (const auto& [option, input] :
       {std::pair{"--points", &in.points_path}, {"--scalars", &in.scalars_path}})
    if (Error e = out->not_input("--out", option, *input)) return cl.usage_error(e.what());
  return group == "g2" ? msm_of_group<G2Affine>(cl, in, *out)
                       : msm_of_group<G1Affine>(cl, in, *out);
}

}  // namespace

int msm_command(int argc, char** argv) {
  return with_memory_guard("msm", [&] { return msm(argc, argv); });
}

}  // namespace stoker::tools
