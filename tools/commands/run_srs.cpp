#include "tools/commands/run_srs.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "engine/workloads/toy_srs.hpp"
#include "kernels/g1_encoding.hpp"
#include "tools/cli/output_file.hpp"

namespace stoker::tools {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::string toy_srs_cache_path(unsigned log_n, std::uint64_t seed) {
  std::filesystem::path dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    dir = xdg;
  else if (const char* home = std::getenv("HOME"); home && *home)
    dir = std::filesystem::path(home) / ".cache";
  else
    dir = std::filesystem::temp_directory_path();
  return (dir / "stoker" /
          ("toy-srs-2^" + std::to_string(log_n) + "-seed-" + std::to_string(seed) + ".g1"))
      .string();
}

Result<RunSrs> load_run_srs(engine::Engine& engine, const std::string& path, unsigned log_n,
                            std::uint64_t seed, bool broadcast) {
  RunSrs out;
  engine::SrsLoadOptions file_options;
  file_options.broadcast = broadcast;
  if (!path.empty()) {
    auto srs = engine.load_srs(path, file_options);
    if (!srs) return std::move(srs).error();
    out.srs = std::move(*srs);
    out.source = "file " + path;
    return out;
  }
  const bool gpu = engine.devices().backend() == devices::Backend::cuda;
  const std::string cache = toy_srs_cache_path(log_n, seed);
  std::error_code ec;
  if (gpu && std::filesystem::is_regular_file(cache, ec) &&
      std::filesystem::file_size(cache, ec) ==
          engine::workloads::toy_srs_points(log_n) * kernels::kG1EncodedBytes) {
    auto srs = engine.load_srs(cache, file_options);
    if (srs) {
      out.srs = std::move(*srs);
      out.source = "cached " + cache;
      return out;
    }
    // A damaged cache file is made again below.
  }
  std::vector<kernels::G1Affine> points(engine::workloads::toy_srs_points(log_n));
  const auto t0 = std::chrono::steady_clock::now();
  const int ordinal = gpu ? engine.devices()[0].info().ordinal : -1;
  if (auto e = engine::workloads::make_toy_srs(seed, log_n, 0, points, ordinal))
    return Error{e.code, "generating the toy SRS: " + e.what()};
  out.generate_s = seconds_since(t0);
  out.source = std::string("generated on ") + (gpu ? "GPU " : "the CPU") +
               (gpu ? std::to_string(ordinal) : "");
  if (gpu) {
    // Best effort: a run without a writable cache generates again next time.
    std::filesystem::create_directories(std::filesystem::path(cache).parent_path(), ec);
    if (auto file = OutputFile::check(cache)) {
      const auto written = file->write([&](std::ostream& os) {
        unsigned char bytes[kernels::kG1EncodedBytes];
        for (const auto& p : points) {
          kernels::encode_g1(p, bytes);
          os.write(reinterpret_cast<const char*>(bytes), sizeof bytes);
        }
      });
      if (!written) out.source += ", cached in " + cache;
    }
  }
  engine::SrsLoadOptions options;
  options.label = "toy 2^" + std::to_string(log_n);
  options.trust_points = true;  // made here, from the generator
  options.broadcast = broadcast;
  auto srs = engine.load_srs(points, options);
  if (!srs) return std::move(srs).error();
  out.srs = std::move(*srs);
  return out;
}

}  // namespace stoker::tools
