#include "devices/detail/cuda_backend.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <string>

#include "devices/detail/backend_impl.hpp"

namespace stoker::devices::detail {
namespace {

class CudaEvent final : public EventImpl {
 public:
  CudaEvent(const CudaDevice& device, cudaEvent_t e, EventKind kind)
      : device_(device), e_(e), kind_(kind) {}
  ~CudaEvent() override { cudaEventDestroy(e_); }

  Backend backend() const noexcept override { return Backend::cuda; }
  EventKind kind() const noexcept override { return kind_; }
  cudaEvent_t native() const noexcept { return e_; }
  const CudaDevice& device() const noexcept { return device_; }

  Result<bool> query() const override {
    const auto st = cudaEventQuery(e_);
    if (st == cudaSuccess) return true;
    if (st == cudaErrorNotReady) return false;
    return Error{device_.check(st), "cudaEventQuery"};
  }

  std::error_code synchronize() const override { return device_.check(cudaEventSynchronize(e_)); }

  Result<float> elapsed_since(const EventImpl& start) const override {
    float ms = 0;
    const auto st = cudaEventElapsedTime(&ms, static_cast<const CudaEvent&>(start).e_, e_);
    if (st != cudaSuccess) return Error{device_.check(st), "cudaEventElapsedTime"};
    return ms;
  }

 private:
  const CudaDevice& device_;
  cudaEvent_t e_;
  EventKind kind_;
};

class CudaStream final : public StreamImpl {
 public:
  CudaStream(CudaDevice& device, cudaStream_t s) : device_(device), s_(s) {}
  ~CudaStream() override {
    // cudaStreamDestroy returns at once; queued work still completes.
    device_.make_current();
    cudaStreamDestroy(s_);
  }

  Backend backend() const noexcept override { return Backend::cuda; }
  Device& device() const noexcept override { return device_; }
  void* native() const noexcept override { return s_; }

  std::error_code copy(void* dst, const void* src, std::size_t bytes) override {
    if (auto ec = device_.make_current()) return ec;
    return device_.check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s_));
  }
  std::error_code record(EventImpl& event) override {
    if (auto ec = device_.make_current()) return ec;
    return device_.check(cudaEventRecord(static_cast<CudaEvent&>(event).native(), s_));
  }
  std::error_code wait(const EventImpl& event) override {
    return device_.check(cudaStreamWaitEvent(s_, static_cast<const CudaEvent&>(event).native(), 0));
  }
  std::error_code enqueue_host(HostTask) override { return make_error_code(Errc::not_supported); }
  std::error_code synchronize() override { return device_.check(cudaStreamSynchronize(s_)); }

 private:
  CudaDevice& device_;
  cudaStream_t s_;
};

std::string read_line(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

int pcie_generation_from_speed(const std::string& speed) {
  // sysfs says e.g. "32.0 GT/s PCIe"; each generation doubles the rate from 2.5 GT/s.
  double gts = 0;
  try {
    gts = std::stod(speed);
  } catch (...) {
    return 0;
  }
  if (gts >= 60) return 6;
  if (gts >= 30) return 5;
  if (gts >= 15) return 4;
  if (gts >= 7.5) return 3;
  if (gts >= 4.5) return 2;
  if (gts >= 2) return 1;
  return 0;
}

int to_int(const std::string& s, int fallback) {
  try {
    return std::stoi(s);
  } catch (...) {
    return fallback;
  }
}

}  // namespace

bool is_sticky_cuda_error(int e) noexcept {
  switch (static_cast<cudaError_t>(e)) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

namespace {
// Bit o: CUDA ordinal o (ordinals past 63 are never chosen; their calls use
// whatever is current, as before).
std::atomic<std::uint64_t> usable_devices{0}, lost_devices{0};
std::uint64_t bit(int ordinal) noexcept {
  return ordinal >= 0 && ordinal < 64 ? std::uint64_t{1} << ordinal : 0;
}
}  // namespace

void note_usable_cuda_device(int ordinal) noexcept {
  usable_devices.fetch_or(bit(ordinal));
}

void note_lost_cuda_device(int ordinal) noexcept {
  lost_devices.fetch_or(bit(ordinal));
}

namespace {
// A driver API function (CUDA 12.0 ABI) found through the runtime, so the
// binary needs no link to libcuda; null where the driver has none.
template <typename Fn>
Fn driver_function(const char* name) noexcept {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    return Fn{};
  }
  return reinterpret_cast<Fn>(fn);
}

// Whether the calling thread has a CUDA context current; true where it
// cannot tell. The runtime has no call for it; the driver's
// cuCtxGetCurrent, found through the runtime (no link to libcuda, which CI
// machines lack), does.
bool thread_has_cuda_context() noexcept {
  static const auto get = driver_function<CUresult(CUDAAPI*)(CUcontext*)>("cuCtxGetCurrent");
  if (!get) return true;
  CUcontext context = nullptr;
  return get(&context) == CUDA_SUCCESS && context != nullptr;
}
}  // namespace

Result<LockedRange> locked_range(const void* p) noexcept {
  // The driver's cuPointerGetAttributes also gives the range of the
  // registration (or allocation) a page-locked pointer lies in, which the
  // runtime's cudaPointerGetAttributes does not (measured on the H200
  // machine: two adjacent registrations report their own ranges, and a
  // page between registrations reports no host type).
  static const auto get =
      driver_function<CUresult(CUDAAPI*)(unsigned, CUpointer_attribute*, void**, CUdeviceptr)>(
          "cuPointerGetAttributes");
  if (get) {
    CUpointer_attribute asked[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                   CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                   CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    unsigned type = 0;
    CUdeviceptr start = 0;
    std::size_t size = 0;
    void* answers[] = {&type, &start, &size};
    if (get(3, asked, answers, reinterpret_cast<CUdeviceptr>(p)) == CUDA_SUCCESS) {
      const bool locked = type == CU_MEMORYTYPE_HOST;
      // A range that does not hold `p` is no range of its.
      const auto at = reinterpret_cast<std::uintptr_t>(p);
      const bool holds = locked && start <= at && at - start < size;
      return LockedRange{locked, holds ? static_cast<std::uintptr_t>(start) : 0, holds ? size : 0};
    }
  }
  cudaPointerAttributes a{};
  if (const auto st = cudaPointerGetAttributes(&a, p); st != cudaSuccess) {
    return Error{make_cuda_error(st), cuda_message("cudaPointerGetAttributes", st)};
  }
  return LockedRange{a.type == cudaMemoryTypeHost, 0, 0};
}

int device_to_restore() noexcept {
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();  // no driver or no device
    return -1;
  }
  return thread_has_cuda_context() ? device : -1;
}

void restore_device(int device) noexcept {
  if (device >= 0 && cudaSetDevice(device) != cudaSuccess) cudaGetLastError();
}

PinningContext::PinningContext() noexcept {
  const std::uint64_t healthy = usable_devices.load() & ~lost_devices.load();
  if (healthy == 0) return;
  const int current = device_to_restore();
  if (current >= 0 && (healthy & bit(current))) return;  // the caller's own GPU will do
  if (cudaSetDevice(std::countr_zero(healthy)) != cudaSuccess)
    cudaGetLastError();
  else
    restore_ = current;  // -1: a thread without a context keeps the healthy one
}

PinningContext::~PinningContext() {
  restore_device(restore_);
}

CudaDevice::CudaDevice(int index, int ordinal, DeviceInfo info) : info_(std::move(info)) {
  info_.index = index;
  info_.ordinal = ordinal;
}

CudaDevice::~CudaDevice() = default;

std::error_code CudaDevice::check(int st) const noexcept {
  if (st == cudaSuccess) return {};
  if (is_sticky_cuda_error(st)) {
    int expected = 0;
    sticky_.compare_exchange_strong(expected, st);
    note_lost_cuda_device(info_.ordinal);
  }
  return make_cuda_error(st);
}

std::error_code CudaDevice::make_current() {
  return check(cudaSetDevice(info_.ordinal));
}

std::error_code CudaDevice::health() const {
  if (const int s = sticky_.load()) return make_cuda_error(s);
  // A sticky error makes every later runtime call fail with it; a call that
  // touches the context without blocking is the cheapest probe.
  if (const auto st = cudaSetDevice(info_.ordinal); st != cudaSuccess) {
    if (!is_sticky_cuda_error(st)) cudaGetLastError();
    return check(st);
  }
  const auto st = cudaStreamQuery(cudaStreamPerThread);
  if (st != cudaSuccess && st != cudaErrorNotReady && is_sticky_cuda_error(st)) return check(st);
  return {};
}

Result<Stream> CudaDevice::create_stream(StreamPriority priority) {
  if (auto ec = make_current()) return Error{ec, "cudaSetDevice"};
  int least = 0, greatest = 0;  // numerically: greatest priority is the lowest number
  if (auto ec = check(cudaDeviceGetStreamPriorityRange(&least, &greatest)))
    return Error{ec, "cudaDeviceGetStreamPriorityRange"};
  const int p = priority == StreamPriority::high  ? greatest
                : priority == StreamPriority::low ? least
                                                  : (least + greatest) / 2;
  cudaStream_t s = nullptr;
  if (auto ec = check(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, p)))
    return Error{ec, "cudaStreamCreateWithPriority"};
  return Stream(std::make_unique<CudaStream>(*this, s));
}

Result<Event> CudaDevice::create_event(EventKind kind) {
  if (auto ec = make_current()) return Error{ec, "cudaSetDevice"};
  unsigned flags = cudaEventDefault;
  if (kind == EventKind::ordering) flags = cudaEventDisableTiming;
  if (kind == EventKind::blocking_sync) flags = cudaEventDisableTiming | cudaEventBlockingSync;
  cudaEvent_t e = nullptr;
  if (auto ec = check(cudaEventCreateWithFlags(&e, flags)))
    return Error{ec, "cudaEventCreateWithFlags"};
  return Event(std::make_unique<CudaEvent>(*this, e, kind));
}

Result<DeviceBuffer> CudaDevice::allocate(std::size_t bytes) {
  if (bytes == 0) return Error{Errc::invalid_argument, "device allocation of 0 bytes"};
  if (auto ec = make_current()) return Error{ec, "cudaSetDevice"};
  void* p = nullptr;
  const auto st = cudaMalloc(&p, bytes);
  if (st == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // not sticky: clear it
    return Error{Errc::out_of_device_memory, "GPU " + std::to_string(info_.index) +
                                                 ": cudaMalloc of " + std::to_string(bytes) +
                                                 " bytes failed (out of memory)"};
  }
  if (auto ec = check(st)) return Error{ec, "cudaMalloc"};
  return DeviceBuffer(this, p, bytes);
}

void CudaDevice::release(void* ptr, std::size_t) noexcept {
  cudaSetDevice(info_.ordinal);
  cudaFree(ptr);
}

Result<void*> CudaDevice::allocate_async(std::size_t bytes, Stream& stream) {
  if (bytes == 0) return Error{Errc::invalid_argument, "device allocation of 0 bytes"};
  if (auto ec = make_current()) return Error{ec, "cudaSetDevice"};
  void* p = nullptr;
  const auto st = cudaMallocAsync(&p, bytes, static_cast<cudaStream_t>(stream.native()));
  if (st == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    return Error{Errc::out_of_device_memory, "GPU " + std::to_string(info_.index) +
                                                 ": cudaMallocAsync of " + std::to_string(bytes) +
                                                 " bytes failed (out of memory)"};
  }
  if (auto ec = check(st)) return Error{ec, "cudaMallocAsync"};
  return p;
}

std::error_code CudaDevice::free_async(void* ptr, Stream& stream) {
  if (ptr == nullptr) return {};
  if (auto ec = make_current()) return ec;
  return check(cudaFreeAsync(ptr, static_cast<cudaStream_t>(stream.native())));
}

std::error_code CudaDevice::configure_pool(std::size_t release_threshold) {
  if (auto ec = make_current()) return ec;
  cudaMemPool_t pool = nullptr;
  if (auto ec = check(cudaDeviceGetDefaultMemPool(&pool, info_.ordinal))) return ec;
  auto threshold = static_cast<std::uint64_t>(release_threshold);
  return check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
}

Result<std::size_t> CudaDevice::pool_reserved_bytes() {
  if (auto ec = make_current()) return Error{ec, "cudaSetDevice"};
  cudaMemPool_t pool = nullptr;
  if (auto ec = check(cudaDeviceGetDefaultMemPool(&pool, info_.ordinal)))
    return Error{ec, "cudaDeviceGetDefaultMemPool"};
  std::uint64_t reserved = 0;
  if (auto ec = check(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved)))
    return Error{ec, "cudaMemPoolGetAttribute"};
  return static_cast<std::size_t>(reserved);
}

Result<MemoryInfo> CudaDevice::memory_info() {
  if (auto ec = make_current()) return Error{ec, "cudaSetDevice"};
  MemoryInfo m;
  if (auto ec = check(cudaMemGetInfo(&m.free, &m.total))) return Error{ec, "cudaMemGetInfo"};
  return m;
}

Result<DeviceInfo> read_cuda_device_info(int ordinal) {
  cudaDeviceProp p{};
  if (const auto st = cudaGetDeviceProperties(&p, ordinal); st != cudaSuccess)
    return Error{make_cuda_error(st), "cudaGetDeviceProperties(" + std::to_string(ordinal) + ")"};
  DeviceInfo info;
  info.backend = Backend::cuda;
  info.ordinal = ordinal;
  info.name = p.name;
  info.cc_major = p.major;
  info.cc_minor = p.minor;
  info.sm_count = p.multiProcessorCount;
  info.total_memory = p.totalGlobalMem;
  info.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
  info.max_shared_per_block = static_cast<int>(p.sharedMemPerBlockOptin);
  char bus[32];
  std::snprintf(bus, sizeof bus, "%04x:%02x:%02x.0", p.pciDomainID, p.pciBusID, p.pciDeviceID);
  info.pci_bus_id = bus;
  const std::string sys = "/sys/bus/pci/devices/" + info.pci_bus_id + "/";
  info.pcie_generation = pcie_generation_from_speed(read_line(sys + "current_link_speed"));
  info.pcie_width = to_int(read_line(sys + "current_link_width"), 0);
  info.pcie_max_generation = pcie_generation_from_speed(read_line(sys + "max_link_speed"));
  info.pcie_max_width = to_int(read_line(sys + "max_link_width"), 0);
  info.numa_node = to_int(read_line(sys + "numa_node"), -1);
  info.cpu_affinity = read_line(sys + "local_cpulist");
  return info;
}

}  // namespace stoker::devices::detail
