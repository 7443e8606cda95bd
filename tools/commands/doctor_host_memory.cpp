#include "tools/commands/doctor_host_memory.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>

#include "tools/commands/doctor_verdict.hpp"

namespace stoker::tools::doctor {
namespace {

// Writers write in chunks of this size so they notice a stop request quickly.
constexpr std::size_t kWriterChunk = 16 * kMiB;

}  // namespace

HostMemory touched_memory(std::size_t bytes) {
  HostMemory m(std::malloc(bytes));
  if (m) std::memset(m.get(), 1, bytes);
  return m;
}

// Each repetition pins fresh memory (all buffers stay alive until the last
// is timed): a freed block's pages would come back cheaper than new ones.
CostFigure measure_host_alloc(const Plan& plan, Errors& errors) {
  CostFigure c;
  c.bytes = plan.cost_bytes;
  std::vector<double> alloc_s, free_s;
  std::vector<devices::PinnedBuffer> held;
  for (int i = 0; i < plan.cost_reps; ++i) {
    const auto t0 = Clock::now();
    auto p = devices::allocate_pinned(devices::Backend::cuda, c.bytes);
    const double s = seconds_since(t0);
    if (!p) {
      errors.add("cudaHostAlloc cost: " + p.error().what());
      break;
    }
    alloc_s.push_back(s);
    held.push_back(std::move(*p));
  }
  for (auto& p : held) {
    const auto t0 = Clock::now();
    p.reset();
    free_s.push_back(seconds_since(t0));
  }
  c.seconds = median(alloc_s);
  c.free_seconds = median(free_s);
  return c;
}

CostFigure measure_host_register(const Plan& plan, std::size_t bytes,
                                 devices::HostRegistration& keep, HostMemory& keep_memory,
                                 Errors& errors) {
  CostFigure c;
  c.bytes = bytes;
  std::vector<double> reg_s, unreg_s;
  std::vector<HostMemory> memory;
  std::vector<devices::HostRegistration> held;
  for (int i = 0; i < plan.cost_reps; ++i) {
    HostMemory m = touched_memory(bytes);
    if (!m) {
      errors.add("cudaHostRegister cost: cannot allocate " + format_bytes(bytes));
      break;
    }
    const auto t0 = Clock::now();
    auto r = devices::register_host(devices::Backend::cuda, m.get(), bytes);
    const double s = seconds_since(t0);
    if (!r) {
      errors.add("cudaHostRegister cost: " + r.error().what());
      break;
    }
    reg_s.push_back(s);
    memory.push_back(std::move(m));
    held.push_back(std::move(*r));
  }
  // Unregister before the memory goes; the first registration stays for the copies.
  for (std::size_t i = 1; i < held.size(); ++i) {
    const auto t0 = Clock::now();
    held[i].reset();
    unreg_s.push_back(seconds_since(t0));
  }
  if (!held.empty()) {
    keep = std::move(held.front());
    keep_memory = std::move(memory.front());
  }
  c.seconds = median(reg_s);
  c.free_seconds = median(unreg_s);
  return c;
}

MemoryLoad::MemoryLoad(int threads, std::size_t bytes) : bytes_(bytes) {
  for (int i = 0; i < threads; ++i)
    threads_.emplace_back([this](std::stop_token stop) { write(stop); });
  // Measure only once every buffer exists and has been written once, so
  // page faults are not part of the load.
  while (ready_.load() < threads) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  written_.store(0);
  t0_ = Clock::now();
}

MemoryLoad::~MemoryLoad() {
  for (auto& t : threads_) t.request_stop();
}  // std::jthread joins

double MemoryLoad::write_gbps() const {
  const double s = seconds_since(t0_);
  return s > 0 ? static_cast<double>(written_.load()) / 1e9 / s : 0;
}

void MemoryLoad::write(std::stop_token stop) {
  HostMemory buf(std::malloc(bytes_));
  if (!buf) {
    failed_.fetch_add(1);
    ready_.fetch_add(1);
    return;
  }
  auto* p = static_cast<unsigned char*>(buf.get());
  int value = 1;
  std::memset(p, value, bytes_);
  ready_.fetch_add(1);
  while (!stop.stop_requested()) {
    ++value;
    for (std::size_t off = 0; off < bytes_ && !stop.stop_requested(); off += kWriterChunk) {
      const std::size_t n = std::min(kWriterChunk, bytes_ - off);
      // memset's string stores put more load on memory than plain vector
      // stores (measured: pinned H2D 30 vs 38 GB/s beside 30 writers).
      std::memset(p + off, value, n);
      // Keep the compiler from dropping stores to memory nobody reads.
      asm volatile("" : : "r"(p) : "memory");
      written_.fetch_add(n, std::memory_order_relaxed);
    }
  }
}

}  // namespace stoker::tools::doctor
