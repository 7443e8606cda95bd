#include "tools/commands/run_srs.hpp"

#include <cstdlib>
#include <filesystem>

#include "engine/workloads/toy_srs.hpp"
#include "kernels/g1_encoding.hpp"
#include "tools/cli/input_file.hpp"
#include "tools/cli/output_file.hpp"

namespace stoker::tools {

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

Result<engine::workloads::LoadedSrs> load_run_srs(engine::Engine& engine,
                                                  const engine::workloads::SrsRequest& request) {
  using engine::workloads::LoadedSrs;
  if (!request.path.empty())
    if (auto size = input_size(request.path); !size) return std::move(size).error();
  const bool gpu = engine.devices().backend() == devices::Backend::cuda;
  if (!request.path.empty() || !gpu) return engine::workloads::load_srs_or_toy(engine, request);
  const std::string cache = toy_srs_cache_path(request.log_n, request.seed);
  std::error_code ec;
  if (std::filesystem::is_regular_file(cache, ec) &&
      std::filesystem::file_size(cache, ec) ==
          engine::workloads::toy_srs_points(request.log_n) * kernels::kG1EncodedBytes) {
    engine::SrsLoadOptions options;
    options.broadcast = request.broadcast;
    if (auto srs = engine.load_srs(cache, options))
      return LoadedSrs{std::move(*srs), "cached " + cache, 0};
    // A damaged cache file is made again below.
  }
  return engine::workloads::load_toy_srs(
      engine, request, [&](std::span<const kernels::G1Affine> points, LoadedSrs& loaded) {
        // Best effort: a run without a writable cache generates again next time.
        std::filesystem::create_directories(std::filesystem::path(cache).parent_path(), ec);
        auto file = OutputFile::check(cache);
        if (!file) return;
        const auto written = file->write([&](std::ostream& os) {
          unsigned char bytes[kernels::kG1EncodedBytes];
          for (const auto& p : points) {
            kernels::encode_g1(p, bytes);
            os.write(reinterpret_cast<const char*>(bytes), sizeof bytes);
          }
        });
        if (!written) loaded.source += ", cached in " + cache;
      });
}

}  // namespace stoker::tools
