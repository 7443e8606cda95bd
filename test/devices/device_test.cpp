// Device, Stream and Event behaviour users rely on, on one backend chosen at
// compile time (see CMakeLists.txt).
#include <cuda_runtime_api.h>  // error codes (and, on the CUDA backend, the runtime itself)
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "common/bytes_str.hpp"
#include "common/host_memory_limit.hpp"
#include "devices/device_set.hpp"
#include "devices/pinned_buffer.hpp"
#include "test/devices/delay.hpp"
#include "test/gpu_guard.hpp"

namespace stoker::devices {
namespace {

#ifdef STOKER_TEST_BACKEND_HOST
constexpr Backend kBackend = Backend::host;
#define REQUIRE_BACKEND() (void)0
#else
constexpr Backend kBackend = Backend::cuda;
#define REQUIRE_BACKEND() STOKER_REQUIRE_GPU()
#endif

class DeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_BACKEND();
    DiscoverOptions o;
    o.backend = kBackend == Backend::cuda ? BackendChoice::cuda : BackendChoice::host;
    if (kBackend == Backend::host) o.host.device_count = 2;
    auto set = discover(o);
    ASSERT_TRUE(set) << set.error().what();
    set_ = std::move(*set);
  }
  Device& dev() { return set_[0]; }
  Stream stream() {
    auto s = dev().create_stream();
    EXPECT_TRUE(s) << s.error().what();
    return std::move(*s);
  }
  Event event(EventKind k = EventKind::ordering) {
    auto e = dev().create_event(k);
    EXPECT_TRUE(e) << e.error().what();
    return std::move(*e);
  }
  PinnedBuffer pinned(std::size_t bytes) {
    auto p = allocate_pinned(kBackend, bytes);
    EXPECT_TRUE(p) << p.error().what();
    return std::move(*p);
  }
  DeviceBuffer device_buffer(std::size_t bytes) {
    auto b = dev().allocate(bytes);
    EXPECT_TRUE(b) << b.error().what();
    return std::move(*b);
  }
  DeviceSet set_;
};

TEST_F(DeviceTest, DiscoversRequestedBackendWithProperties) {
  EXPECT_EQ(set_.backend(), kBackend);
  ASSERT_GE(set_.size(), 1u);
  EXPECT_FALSE(dev().info().name.empty());
  EXPECT_GT(dev().info().total_memory, 0u);
  EXPECT_EQ(set_.topology().peer_access.size(), set_.size());
  EXPECT_FALSE(set_.topology().peer_access[0][0]);
  EXPECT_FALSE(dev().health());
}

TEST_F(DeviceTest, WorkOnOneStreamRunsInOrder) {
  constexpr std::size_t n = 1 << 20;
  auto src = pinned(n * sizeof(int));
  auto dst = pinned(n * sizeof(int));
  auto a = device_buffer(n * sizeof(int));
  auto b = device_buffer(n * sizeof(int));
  auto* s = static_cast<int*>(src.data());
  std::iota(s, s + n, 7);
  std::memset(dst.data(), 0xff, n * sizeof(int));
  auto st = stream();
  // Each step reads what the previous wrote; any reordering shows in dst.
  ASSERT_FALSE(st.copy(a.data(), src.data(), n * sizeof(int)));
  ASSERT_FALSE(test::enqueue_delay(st, 10));
  ASSERT_FALSE(test::enqueue_store(st, a.as<int>(), -5));
  ASSERT_FALSE(st.copy(b.data(), a.data(), n * sizeof(int)));
  ASSERT_FALSE(st.copy(dst.data(), b.data(), n * sizeof(int)));
  ASSERT_FALSE(st.synchronize());
  const auto* d = static_cast<const int*>(dst.data());
  EXPECT_EQ(d[0], -5);
  for (std::size_t i = 1; i < n; ++i) ASSERT_EQ(d[i], static_cast<int>(i + 7)) << i;
}

TEST_F(DeviceTest, ConsumerStreamWaitsForProducerEventDespiteDelay) {
  auto producer = stream();
  auto consumer = stream();
  auto ready = event();
  auto flag = device_buffer(sizeof(int));
  auto out = pinned(sizeof(int));
  *static_cast<int*>(out.data()) = 0;
  ASSERT_FALSE(test::enqueue_store(producer, flag.as<int>(), 1));
  ASSERT_FALSE(test::enqueue_delay(producer, 50));
  ASSERT_FALSE(test::enqueue_store(producer, flag.as<int>(), 2));
  ASSERT_FALSE(producer.record(ready));
  ASSERT_FALSE(consumer.wait(ready));
  ASSERT_FALSE(consumer.copy(out.data(), flag.data(), sizeof(int)));
  ASSERT_FALSE(consumer.synchronize());
  EXPECT_EQ(*static_cast<int*>(out.data()), 2) << "consumer ran before the producer's event";
}

TEST_F(DeviceTest, WaitCapturesOnlyTheRecordBeforeIt) {
  auto producer = stream();
  auto consumer = stream();
  auto ready = event();
  auto done = event();
  ASSERT_FALSE(producer.record(ready));  // completes at once
  ASSERT_FALSE(consumer.wait(ready));
  ASSERT_FALSE(consumer.record(done));
  ASSERT_FALSE(test::enqueue_delay(producer, 200));
  ASSERT_FALSE(producer.record(ready));  // re-recorded after the wait was issued
  ASSERT_FALSE(done.synchronize());
  auto q = ready.query();
  ASSERT_TRUE(q);
  EXPECT_FALSE(*q) << "consumer should not have waited for the later record";
  ASSERT_FALSE(producer.synchronize());
}

TEST_F(DeviceTest, HostWaitsOnEvent) {
  auto st = stream();
  auto e = event(EventKind::blocking_sync);
  auto never = event();
  auto q0 = never.query();
  ASSERT_TRUE(q0);
  EXPECT_TRUE(*q0) << "an event never recorded counts as complete";
  ASSERT_FALSE(test::enqueue_delay(st, 100));
  ASSERT_FALSE(st.record(e));
  auto q1 = e.query();
  ASSERT_TRUE(q1);
  EXPECT_FALSE(*q1);
  ASSERT_FALSE(e.synchronize());
  auto q2 = e.query();
  ASSERT_TRUE(q2);
  EXPECT_TRUE(*q2);
}

TEST_F(DeviceTest, TimingEventsMeasureDeviceWork) {
  auto st = stream();
  auto t0 = event(EventKind::timing);
  auto t1 = event(EventKind::timing);
  ASSERT_FALSE(st.record(t0));
  ASSERT_FALSE(test::enqueue_delay(st, 30));
  ASSERT_FALSE(st.record(t1));
  ASSERT_FALSE(t1.synchronize());
  auto ms = elapsed_ms(t0, t1);
  ASSERT_TRUE(ms) << ms.error().what();
  EXPECT_GE(*ms, 25.0f);
  EXPECT_LT(*ms, 1000.0f);
  auto ordering = event();
  EXPECT_FALSE(elapsed_ms(t0, ordering)) << "ordering events carry no time";
}

TEST_F(DeviceTest, DestroyingStreamWithQueuedWorkFinishesIt) {
  auto out = pinned(sizeof(int));
  *static_cast<int*>(out.data()) = 0;
  auto flag = device_buffer(sizeof(int));
  auto done = event();
  {
    auto st = stream();
    ASSERT_FALSE(test::enqueue_delay(st, 30));
    ASSERT_FALSE(test::enqueue_store(st, flag.as<int>(), 42));
    ASSERT_FALSE(st.copy(out.data(), flag.data(), sizeof(int)));
    ASSERT_FALSE(st.record(done));
  }
  ASSERT_FALSE(done.synchronize());
  EXPECT_EQ(*static_cast<int*>(out.data()), 42);
}

TEST_F(DeviceTest, ImpossibleAllocationIsAnErrorAndDeviceStaysUsable) {
  auto huge = dev().allocate(std::size_t{1} << 52);
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error().code, make_error_code(Errc::out_of_device_memory));
  EXPECT_NE(huge.error().what().find(std::to_string(std::size_t{1} << 52)), std::string::npos)
      << huge.error().what();
  EXPECT_FALSE(dev().health());
  auto small = dev().allocate(4096);
  EXPECT_TRUE(small);
  EXPECT_FALSE(dev().allocate(0));
}

TEST_F(DeviceTest, StreamOrderedAllocationRoundTrips) {
  auto st = stream();
  auto before = dev().memory_info();
  ASSERT_TRUE(before);
  auto p = dev().allocate_async(1 << 20, st);
  ASSERT_TRUE(p) << p.error().what();
  auto src = pinned(1 << 20);
  auto dst = pinned(1 << 20);
  std::memset(src.data(), 0x5a, 1 << 20);
  ASSERT_FALSE(st.copy(*p, src.data(), 1 << 20));
  ASSERT_FALSE(st.copy(dst.data(), *p, 1 << 20));
  ASSERT_FALSE(dev().free_async(*p, st));
  ASSERT_FALSE(st.synchronize());
  EXPECT_EQ(std::memcmp(src.data(), dst.data(), 1 << 20), 0);
}

TEST_F(DeviceTest, RegisteredHostMemoryCopies) {
  std::vector<int> host(1 << 16);
  std::iota(host.begin(), host.end(), 1);
  auto reg = register_host(kBackend, host.data(), host.size() * sizeof(int));
  ASSERT_TRUE(reg) << reg.error().what();
  auto d = device_buffer(host.size() * sizeof(int));
  std::vector<int> back(host.size(), 0);
  auto reg2 = register_host(kBackend, back.data(), back.size() * sizeof(int));
  ASSERT_TRUE(reg2);
  auto st = stream();
  ASSERT_FALSE(st.copy(d.data(), host.data(), host.size() * sizeof(int)));
  ASSERT_FALSE(st.copy(back.data(), d.data(), back.size() * sizeof(int)));
  ASSERT_FALSE(st.synchronize());
  EXPECT_EQ(host, back);
  EXPECT_FALSE(register_host(kBackend, nullptr, 16));
}

#ifdef STOKER_TEST_BACKEND_HOST
// CUDA refuses to register a range that overlaps a registered page
// (cudaErrorHostMemoryAlreadyRegistered); the host backend refuses the same
// ranges, so the engine's fallback from registering to staging runs in CI.
TEST(HostRegistration, OverlappingPagesAreRefusedUntilReleased) {
  alignas(4096) static std::byte memory[4 * 4096];
  auto first = register_host(Backend::host, memory + 100, 4096);  // pages 0 and 1
  ASSERT_TRUE(first) << first.error().what();
  auto same_page = register_host(Backend::host, memory + 2 * 4096 - 8, 8);  // page 1
  ASSERT_FALSE(same_page);
  EXPECT_EQ(same_page.error().code, make_cuda_error(cudaErrorHostMemoryAlreadyRegistered));
  EXPECT_NE(same_page.error().what().find("registered already"), std::string::npos)
      << same_page.error().what();
  auto covering = register_host(Backend::host, memory, sizeof memory);
  EXPECT_FALSE(covering) << "a range around a registered one";
  auto next_pages = register_host(Backend::host, memory + 2 * 4096, 2 * 4096);  // pages 2, 3
  EXPECT_TRUE(next_pages) << next_pages.error().what();
  first->reset();
  auto again = register_host(Backend::host, memory + 4096, 8);  // page 1, free again
  EXPECT_TRUE(again) << again.error().what();
}
#endif

// More page-locked memory than the machine has (or the process's
// address-space or data limit allows) can never be granted: the request
// fails in words, naming the size and the limit, on every backend and
// under every sanitizer.
TEST_F(DeviceTest, PinnedRequestBeyondTheHostsMemoryFailsNamingBoth) {
  const auto physical = static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) *
                        static_cast<std::size_t>(sysconf(_SC_PAGE_SIZE));
  auto p = allocate_pinned(kBackend, physical + 4096);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, make_error_code(Errc::out_of_host_memory));
  EXPECT_EQ(p.error().what(), "a pinned allocation needs " +
                                  common::bytes_with_units(physical + 4096) + " of host memory; " +
                                  common::HostMemoryLimit::current().describe());
}

#ifndef STOKER_TEST_BACKEND_HOST
// The engine's copy streams ask for high priority so copies are not queued
// behind kernels; the request must reach the driver.
TEST_F(DeviceTest, StreamPrioritiesMapToTheDeviceRange) {
  REQUIRE_BACKEND();
  int least = 0, greatest = 0;
  ASSERT_EQ(cudaDeviceGetStreamPriorityRange(&least, &greatest), cudaSuccess);
  ASSERT_NE(least, greatest) << "this device has a single stream priority";
  const auto priority_of = [&](StreamPriority p) {
    auto s = dev().create_stream(p);
    EXPECT_TRUE(s) << s.error().what();
    int value = 0;
    EXPECT_EQ(cudaStreamGetPriority(static_cast<cudaStream_t>(s->native()), &value), cudaSuccess);
    return value;
  };
  EXPECT_EQ(priority_of(StreamPriority::high), greatest);
  EXPECT_EQ(priority_of(StreamPriority::low), least);
  const int normal = priority_of(StreamPriority::normal);
  EXPECT_TRUE(normal <= least && normal >= greatest) << normal;
}

// The VmFlags line of the mapping that holds `p` in /proc/self/smaps.
std::string vm_flags(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    std::uintptr_t from = 0, to = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " ", &from, &to) == 2 &&
        line.find(':') > line.find(' '))
      inside = from <= addr && addr < to;
    else if (inside && line.rfind("VmFlags:", 0) == 0)
      return line.substr(9);
  }
  return "";
}

// Small pinned buffers come from cudaHostAlloc, large ones are registered
// huge-page mappings: both must be page-locked host memory the driver
// knows (or copies would go through its pageable path), copy both ways to
// the last byte, and give their pages back (a range registered again after
// the buffer is gone is accepted).
TEST_F(DeviceTest, SmallAndLargePinnedBuffersArePageLockedAndCopy) {
  REQUIRE_BACKEND();
  for (const std::size_t bytes : {std::size_t{(1 << 20) + 7}, std::size_t{(96 << 20) + 12345}}) {
    SCOPED_TRACE(bytes);
    void* where = nullptr;
    {
      auto p = pinned(bytes);
      ASSERT_EQ(p.size(), bytes);
      where = p.data();
      cudaPointerAttributes attr{};
      ASSERT_EQ(cudaPointerGetAttributes(&attr, p.data()), cudaSuccess);
      EXPECT_EQ(attr.type, cudaMemoryTypeHost);
      auto* bytes_in = static_cast<unsigned char*>(p.data());
      for (std::size_t i = 0; i < bytes; ++i) bytes_in[i] = static_cast<unsigned char>(i * 131 + 7);
      auto d = device_buffer(bytes);
      auto back = pinned(bytes);
      auto st = stream();
      ASSERT_FALSE(st.copy(d.data(), p.data(), bytes));
      ASSERT_FALSE(st.copy(back.data(), d.data(), bytes));
      ASSERT_FALSE(st.synchronize());
      EXPECT_EQ(std::memcmp(p.data(), back.data(), bytes), 0);
      // A forked child does not get the mapped pages ("dc": VM_DONTCOPY), so
      // the parent's writes stay in the frames the device reads.
      const std::string flags = vm_flags(p.data());
      std::printf("  pinned %zu bytes: VmFlags %s\n", bytes, flags.c_str());
      if (bytes >= (64 << 20)) {
        EXPECT_NE((" " + flags + " ").find(" dc "), std::string::npos) << flags;
      }
    }
    // Freed: the driver no longer knows the range as pinned.
    cudaPointerAttributes attr{};
    if (cudaPointerGetAttributes(&attr, where) == cudaSuccess) {
      EXPECT_NE(attr.type, cudaMemoryTypeHost);
    }
    cudaGetLastError();
  }
}

// Memory declared page-locked is checked on every page, not at its ends:
// a buffer registered in two adjacent pieces is page-locked, one with an
// unregistered page between its pieces is not (the engine would copy it
// through the driver's pageable path), and pinned buffers of both kinds
// are page-locked to their last byte and not past it.
TEST_F(DeviceTest, PageLockedMemoryIsCheckedOnEveryPieceNotJustItsEnds) {
  REQUIRE_BACKEND();
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE)), n = 64 * page;
  void* mapped = mmap(nullptr, 3 * n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  auto* m = static_cast<std::byte*>(mapped);
  {
    auto a = register_host(kBackend, m, n);
    auto b = register_host(kBackend, m + n, page);   // adjacent to a
    auto c = register_host(kBackend, m + 2 * n, n);  // a gap of n - page before it
    ASSERT_TRUE(a && b && c);
    const auto locked = [&](const std::byte* p, std::size_t bytes) {
      auto r = is_page_locked(kBackend, p, bytes);
      EXPECT_TRUE(r) << r.error().what();
      return r && *r;
    };
    EXPECT_TRUE(locked(m + 100, n + page - 200)) << "two adjacent registrations";
    EXPECT_FALSE(locked(m, 3 * n)) << "unregistered pages between registrations";
    EXPECT_FALSE(locked(m + n + page, 1)) << "the first unregistered page";
    EXPECT_FALSE(locked(m + 2 * n - 1, 2)) << "a registration's first byte after a gap";
    EXPECT_TRUE(locked(m + 2 * n, n));
    EXPECT_FALSE(locked(m + 2 * n, n + 1)) << "one byte past the last registration";
  }
  munmap(mapped, 3 * n);
  for (const std::size_t bytes : {std::size_t{1} << 20, std::size_t{96} << 20}) {
    auto p = pinned(bytes);
    auto r = is_page_locked(kBackend, p.data(), bytes);
    ASSERT_TRUE(r) << r.error().what();
    EXPECT_TRUE(*r) << bytes << " pinned bytes";
  }
}
#endif

TEST_F(DeviceTest, EmptyHandlesReportErrorsInsteadOfCrashing) {
  Stream empty;
  Event none;
  EXPECT_TRUE(empty.synchronize());
  EXPECT_TRUE(empty.copy(this, this, 1));
  auto st = stream();
  EXPECT_TRUE(st.record(none));
  EXPECT_TRUE(st.wait(none));
  EXPECT_FALSE(none.query());
}

TEST(DeviceDiscovery, BadIndicesAndOptionsAreErrorsNamingTheValue) {
  DiscoverOptions o;
  o.backend = BackendChoice::host;
  o.host.device_count = 0;
  auto none = discover(o);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, make_error_code(Errc::invalid_argument));
  EXPECT_NE(none.error().what().find("0"), std::string::npos);

  o.host.device_count = 2;
  o.host.slowdown = {1.0, 0.5};
  auto bad = discover(o);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().what().find("0.5"), std::string::npos) << bad.error().what();

  DiscoverOptions c;
  c.backend = BackendChoice::cuda;
  c.cuda_ordinals = {99};
  auto missing = discover(c);
  ASSERT_FALSE(missing);
  if (cuda_device_count() == 0)
    EXPECT_EQ(missing.error().code, make_error_code(Errc::no_device));
  else
    EXPECT_NE(missing.error().what().find("99"), std::string::npos) << missing.error().what();
}

// Options for one backend given to the other are refused, not ignored: a
// run would otherwise report figures for devices nobody asked for.
TEST(DeviceDiscovery, OptionsForTheOtherBackendAreRefused) {
  DiscoverOptions named;
  named.backend = BackendChoice::host;
  named.cuda_ordinals = {1};
  auto host = discover(named);
  ASSERT_FALSE(host);
  EXPECT_EQ(host.error().code, make_error_code(Errc::invalid_argument));
  EXPECT_NE(host.error().what().find("CUDA devices were named"), std::string::npos)
      << host.error().what();
  if (cuda_device_count() == 0) {
    // automatic falls back to the host backend, which must refuse them too
    named.backend = BackendChoice::automatic;
    auto fallback = discover(named);
    ASSERT_FALSE(fallback);
    EXPECT_NE(fallback.error().what().find("no CUDA device is visible"), std::string::npos)
        << fallback.error().what();
  } else {
    DiscoverOptions shaped;
    shaped.backend = BackendChoice::cuda;
    shaped.host.slowdown = {2.0};
    auto cuda = discover(shaped);
    ASSERT_FALSE(cuda);
    EXPECT_NE(cuda.error().what().find("backend is CUDA"), std::string::npos)
        << cuda.error().what();
    shaped.host.slowdown.clear();
    shaped.host.cpu_affinity = {"0"};
    cuda = discover(shaped);
    ASSERT_FALSE(cuda);
    EXPECT_NE(cuda.error().what().find("1 CPU lists"), std::string::npos) << cuda.error().what();
  }
}

}  // namespace
}  // namespace stoker::devices
