#include "engine/engine.hpp"

#include <algorithm>
#include <boost/asio/error.hpp>
#include <new>

#include "common/host_memory_limit.hpp"
#include "engine/detail/engine_core.hpp"
#include "engine/g1_file.hpp"

namespace asio = boost::asio;

namespace stoker::engine {

std::error_code operation_aborted() noexcept {
  return std::error_code(asio::error::make_error_code(asio::error::operation_aborted));
}

Engine::Engine(Tag, executor_type executor, std::unique_ptr<detail::EngineCore> core)
    : executor_(std::move(executor)), core_(std::move(core)) {}

namespace {
// The engine's calls on its caller's thread leave the caller's current GPU
// as they found it (devices::KeepCurrentDevice).
bool may_use_cuda(const Config& c) {
  return c.devices.backend != devices::BackendChoice::host;
}
}  // namespace

Engine::Engine(executor_type executor, Config config) : executor_(std::move(executor)) {
  devices::KeepCurrentDevice keep(may_use_cuda(config));
  auto core = detail::EngineCore::create(std::move(config));
  if (!core) throw std::system_error(core.error().code, core.error().what());
  core_ = std::move(*core);
}

Result<std::unique_ptr<Engine>> Engine::create(executor_type executor, Config config) {
  devices::KeepCurrentDevice keep(may_use_cuda(config));
  // What the system refuses is an error like any other failure to start:
  // the parts made so far end their threads as they are destroyed.
  try {
    auto core = detail::EngineCore::create(std::move(config));
    if (!core) return std::move(core).error();
    return std::make_unique<Engine>(Tag{}, std::move(executor), std::move(*core));
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused("creating the engine");
  }
}

Engine::~Engine() {
  devices::KeepCurrentDevice keep(core_->devices().backend() == devices::Backend::cuda);
  core_.reset();
}

const devices::DeviceSet& Engine::devices() const noexcept {
  return core_->devices();
}
const Config& Engine::config() const noexcept {
  return core_->config();
}
EngineStats Engine::stats() const {
  return core_->stats();
}

void Engine::submit_erased(Job job, boost::asio::any_completion_handler<SubmitSignature> handler,
                           executor_type handler_executor) {
  core_->submit(std::move(job), std::move(handler), std::move(handler_executor));
}

void Engine::shutdown_erased(boost::asio::any_completion_handler<ShutdownSignature> handler,
                             executor_type handler_executor) {
  core_->shutdown(std::move(handler), std::move(handler_executor));
}

void Engine::evict_erased(
    Srs srs, boost::asio::any_completion_handler<void(boost::system::error_code)> handler,
    executor_type handler_executor) {
  core_->evict_srs(srs.residency(), std::move(handler), std::move(handler_executor));
}

Result<Srs> Engine::load_srs(const std::string& path, const SrsLoadOptions& options) {
  auto points = g1_file_points(path);
  if (!points) return std::move(points).error();
  SrsLoadOptions named = options;
  if (named.label == SrsLoadOptions{}.label) named.label = path;
  devices::KeepCurrentDevice keep(core_->devices().backend() == devices::Backend::cuda);
  return core_->load_srs(
      *points,
      [&path](std::size_t first, std::span<kernels::G1Affine> out) {
        return read_g1_file(path, first, out);
      },
      named);
}

Result<Srs> Engine::load_srs(std::span<const kernels::G1Affine> points,
                             const SrsLoadOptions& options) {
  const std::span<const kernels::G1Affine> one[] = {points};
  return load_srs(std::span<const std::span<const kernels::G1Affine>>(one), options);
}

Result<Srs> Engine::load_srs(std::span<const std::span<const kernels::G1Affine>> segments,
                             const SrsLoadOptions& options) {
  std::size_t points = 0;
  for (const auto& s : segments) points += s.size();
  return load_srs(points, gather_segments(segments), options);
}

Result<Srs> Engine::load_srs(std::size_t points, const SrsFill& fill,
                             const SrsLoadOptions& options) {
  if (!fill) return Error{Errc::invalid_argument, "SRS '" + options.label + "': no fill"};
  devices::KeepCurrentDevice keep(core_->devices().backend() == devices::Backend::cuda);
  return core_->load_srs(points, fill, options);
}

alloc::PinnedPool& Engine::pinned_pool() noexcept {
  return core_->pinned_pool();
}

std::size_t Engine::lookahead() const noexcept {
  return core_->lookahead();
}

std::error_code Engine::reserve_pinned(const Partition& like, std::size_t count) {
  devices::KeepCurrentDevice keep(core_->devices().backend() == devices::Backend::cuda);
  return core_->reserve_pinned(like, count);
}

void Engine::reserve_device(const Partition& like) {
  devices::KeepCurrentDevice keep(core_->devices().backend() == devices::Backend::cuda);
  core_->reserve_device(like);
}

std::size_t Engine::pinned_bytes(const Partition& p) {
  // The pool rounds each block up to its size class (one too large for any
  // class is refused by the pool, and counts as asked).
  const auto taken = [](std::size_t b) {
    return std::max(b, alloc::PinnedPool::block_capacity(b));
  };
  std::size_t total = 0;
  for (const auto& in : p.inputs)
    if (in.kind == InputKind::produced) total += taken(in.bytes);
  for (const auto& out : p.outputs)
    if (!out.pinned) total += taken(out.bytes);
  return total;
}

}  // namespace stoker::engine
