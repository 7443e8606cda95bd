#include "devices/detail/host_backend.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <new>
#include <thread>
#include <unordered_map>

#include "common/host_memory_limit.hpp"
#include "common/start_thread.hpp"
#include "devices/detail/backend_impl.hpp"

namespace stoker::devices::detail {
namespace {

using Clock = std::chrono::steady_clock;
// Waits re-check the device's fault flag this often, so a fault on another
// stream can never leave a waiter asleep.
constexpr auto kFaultPoll = std::chrono::milliseconds(2);
constexpr std::size_t kDeviceAlignment = 256;  // as cudaMalloc guarantees

struct HostEventState {
  std::mutex m;
  std::condition_variable cv;
  std::uint64_t recorded = 0;
  std::uint64_t completed = 0;
  Clock::time_point when{};
  std::shared_ptr<HostDeviceState> device;
};

class HostEvent final : public EventImpl {
 public:
  HostEvent(EventKind kind, std::shared_ptr<HostDeviceState> device)
      : kind_(kind), s_(std::make_shared<HostEventState>()) {
    s_->device = std::move(device);
  }

  Backend backend() const noexcept override { return Backend::host; }
  EventKind kind() const noexcept override { return kind_; }

  Result<bool> query() const override {
    if (auto ec = s_->device->health()) {
      s_->device->quiesce();
      return Error{ec, "device faulted"};
    }
    std::lock_guard lock(s_->m);
    return s_->completed >= s_->recorded;
  }

  std::error_code synchronize() const override {
    std::uint64_t target;
    {
      std::lock_guard lock(s_->m);
      target = s_->recorded;
    }
    const auto ec = wait_for(s_, target);
    if (ec) s_->device->quiesce();  // a host thread: see HostDeviceState::quiesce
    return ec;
  }

  Result<float> elapsed_since(const EventImpl& start_impl) const override {
    const auto& start = static_cast<const HostEvent&>(start_impl);
    Clock::time_point t0, t1;
    {
      std::lock_guard lock(start.s_->m);
      if (start.s_->completed < start.s_->recorded || start.s_->recorded == 0)
        return Error{Errc::invalid_argument, "elapsed_ms: start event not complete"};
      t0 = start.s_->when;
    }
    {
      std::lock_guard lock(s_->m);
      if (s_->completed < s_->recorded || s_->recorded == 0)
        return Error{Errc::invalid_argument, "elapsed_ms: end event not complete"};
      t1 = s_->when;
    }
    return std::chrono::duration<float, std::milli>(t1 - t0).count();
  }

  // The number a wait issued now must reach; recording bumps it.
  std::uint64_t begin_record() const {
    std::lock_guard lock(s_->m);
    return ++s_->recorded;
  }
  std::uint64_t last_recorded() const {
    std::lock_guard lock(s_->m);
    return s_->recorded;
  }
  const std::shared_ptr<HostEventState>& state() const { return s_; }

  static void complete(HostEventState& s, std::uint64_t seq) {
    {
      std::lock_guard lock(s.m);
      if (seq > s.completed) {
        s.completed = seq;
        s.when = Clock::now();
      }
    }
    s.cv.notify_all();
  }

  static std::error_code wait_for(const std::shared_ptr<HostEventState>& s, std::uint64_t target) {
    // As on CUDA, a faulted device fails every wait, even on finished work.
    if (auto ec = s->device->health()) return ec;
    std::unique_lock lock(s->m);
    while (s->completed < target) {
      if (auto ec = s->device->health()) return ec;
      s->cv.wait_for(lock, kFaultPoll);
    }
    return {};
  }

 private:
  EventKind kind_;
  std::shared_ptr<HostEventState> s_;
};

class HostStream final : public StreamImpl {
 public:
  HostStream(HostDevice& device, std::shared_ptr<HostDeviceState> state)
      : device_(device), state_(std::move(state)) {}

  // The stream's thread, the emulated device's engine; refused by the
  // system, it is the error of create_stream.
  Error start() {
    const std::string what =
        "the thread of a stream of host backend device " + std::to_string(device_.info().index);
    // Its tasks (copies, the engine's bookkeeping) cannot be unwound
    // halfway: out of host memory, the process ends in words.
    return common::start_thread(worker_, what, [this, what] {
      try {
        run();
      } catch (const std::bad_alloc&) {
        common::abort_out_of_host_memory(what);
      }
    });
  }

  ~HostStream() override {
    {
      std::lock_guard lock(m_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (worker_.joinable()) worker_.join();  // drains what is queued first
  }

  Backend backend() const noexcept override { return Backend::host; }
  Device& device() const noexcept override { return device_; }
  void* native() const noexcept override { return nullptr; }

  std::error_code copy(void* dst, const void* src, std::size_t bytes) override {
    return push([dst, src, bytes] {
      std::memcpy(dst, src, bytes);
      return std::error_code{};
    });
  }

  // One thread records a given event at a time (the engine's events each
  // have one owner): two racing here could take their sequence numbers in
  // one order and queue them in the other, and release waiters early.
  std::error_code record(EventImpl& event) override {
    auto& e = static_cast<HostEvent&>(event);
    const auto seq = e.begin_record();
    return push([s = e.state(), seq] {
      HostEvent::complete(*s, seq);
      return std::error_code{};
    });
  }

  std::error_code wait(const EventImpl& event) override {
    const auto& e = static_cast<const HostEvent&>(event);
    const auto target = e.last_recorded();
    if (target == 0) return {};  // never recorded: nothing to wait for, as on CUDA
    return push([s = e.state(), target] { return HostEvent::wait_for(s, target); }, TaskKind::wait);
  }

  std::error_code enqueue_host(HostTask task) override { return push(std::move(task)); }

  // Runs in stream order even on a faulted device: frees must not leak.
  std::error_code enqueue_cleanup(HostTask task) {
    return push(std::move(task), TaskKind::cleanup);
  }

  std::error_code synchronize() override {
    std::unique_lock lock(m_);
    const auto target = submitted_;
    while (finished_ < target && !state_->health()) done_cv_.wait_for(lock, kFaultPoll);
    lock.unlock();
    const auto ec = state_->health();
    if (ec) state_->quiesce();
    return ec;
  }

 private:
  // What a task is, for the fault and slowdown rules in run().
  enum class TaskKind {
    work,     // copies, kernels, records
    wait,     // for another stream's event: idle time, never slowed down
    cleanup,  // frees: run even on a faulted device
  };

  std::error_code push(HostTask task, TaskKind kind = TaskKind::work) {
    if (kind != TaskKind::cleanup)
      if (auto ec = state_->health()) return ec;
    {
      std::lock_guard lock(m_);
      queue_.push_back({std::move(task), kind});
      ++submitted_;
    }
    cv_.notify_one();
    return {};
  }

  void run() {
    for (;;) {
      Entry entry;
      {
        std::unique_lock lock(m_);
        cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        entry = std::move(queue_.front());
        queue_.pop_front();
      }
      auto& task = entry.task;
      // Counted before the health check: once a fault is set, every task
      // that saw a healthy device stays counted until it ends (quiesce()).
      state_->running.fetch_add(1, std::memory_order_acq_rel);
      // A faulted device runs nothing more but frees: its events never
      // complete, just as CUDA's never do after a sticky error. A free waits
      // for tasks still running on other streams, which may use the memory.
      if (entry.kind == TaskKind::cleanup && state_->health()) {
        state_->running.fetch_sub(1, std::memory_order_acq_rel);
        state_->quiesce();
        task();
        state_->running.fetch_add(1, std::memory_order_acq_rel);
      } else if (!state_->health()) {
        const auto t0 = Clock::now();
        const auto ec = task();
        if (ec) {
          state_->set_fault(ec);
        } else if (state_->slowdown > 1.0 && entry.kind != TaskKind::wait) {
          // A slow device works slowly; waiting for another stream is not
          // its work (slowing the wait too made a compute stream that
          // waited 30 ms for a copy idle 120 ms at a factor of 4).
          const auto spent = Clock::now() - t0;
          std::this_thread::sleep_for(
              std::chrono::duration_cast<Clock::duration>(spent * (state_->slowdown - 1.0)));
        }
      }
      state_->running.fetch_sub(1, std::memory_order_acq_rel);
      {
        std::lock_guard lock(m_);
        ++finished_;
      }
      done_cv_.notify_all();
    }
  }

  HostDevice& device_;
  std::shared_ptr<HostDeviceState> state_;
  std::mutex m_;
  std::condition_variable cv_, done_cv_;
  struct Entry {
    HostTask task;
    TaskKind kind = TaskKind::work;
  };
  std::deque<Entry> queue_;
  std::uint64_t submitted_ = 0, finished_ = 0;
  bool stopping_ = false;
  std::thread worker_;  // started by start(), once everything it uses exists
};

std::size_t round_up(std::size_t n, std::size_t a) {
  return (n + a - 1) / a * a;
}

}  // namespace

HostDevice::HostDevice(int index, double slowdown, std::size_t capacity, std::string cpu_affinity)
    : state_(std::make_shared<HostDeviceState>()) {
  info_.backend = Backend::host;
  info_.index = index;
  info_.ordinal = index;
  info_.name = "host backend device " + std::to_string(index);
  info_.sm_count = static_cast<int>(std::thread::hardware_concurrency());
  info_.total_memory = capacity;
  info_.slowdown = slowdown;
  info_.cpu_affinity = std::move(cpu_affinity);
  state_->slowdown = slowdown;
  state_->capacity = capacity;
}

HostDevice::~HostDevice() = default;

Result<Stream> HostDevice::create_stream(StreamPriority) {
  if (auto ec = health()) return Error{ec, "device faulted"};
  auto stream = std::make_unique<HostStream>(*this, state_);
  if (Error e = stream->start()) return e;
  return Stream(std::move(stream));
}

Result<Event> HostDevice::create_event(EventKind kind) {
  return Event(std::make_unique<HostEvent>(kind, state_));
}

// Each allocation carries its rounded size in a header just below the
// pointer handed out, so a free needs no size (cudaFreeAsync takes none).
Result<void*> HostDevice::take(std::size_t bytes) {
  if (auto ec = health()) return Error{ec, "device faulted"};
  if (bytes == 0) return Error{Errc::invalid_argument, "device allocation of 0 bytes"};
  const auto rounded = round_up(bytes, kDeviceAlignment);
  auto used = state_->used.load();
  do {
    if (rounded > state_->capacity - used)
      return Error{Errc::out_of_device_memory,
                   "host device " + std::to_string(info_.index) + ": cannot allocate " +
                       std::to_string(bytes) + " bytes, " +
                       std::to_string(state_->capacity - used) + " of " +
                       std::to_string(state_->capacity) + " free"};
  } while (!state_->used.compare_exchange_weak(used, used + rounded));
  auto* base =
      static_cast<std::byte*>(std::aligned_alloc(kDeviceAlignment, rounded + kDeviceAlignment));
  if (base == nullptr) {
    state_->used -= rounded;
    return common::host_memory_refused(
        "host backend device " + std::to_string(info_.index) + "'s memory", rounded);
  }
  std::memcpy(base, &rounded, sizeof rounded);
  return static_cast<void*>(base + kDeviceAlignment);
}

void HostDevice::give_back(HostDeviceState& state, void* ptr) noexcept {
  auto* base = static_cast<std::byte*>(ptr) - kDeviceAlignment;
  std::size_t rounded;
  std::memcpy(&rounded, base, sizeof rounded);
  state.used -= rounded;
  std::free(base);
}

Result<DeviceBuffer> HostDevice::allocate(std::size_t bytes) {
  auto p = take(bytes);
  if (!p) return std::move(p).error();
  return DeviceBuffer(this, *p, bytes);
}

void HostDevice::release(void* ptr, std::size_t) noexcept {
  give_back(*state_, ptr);
}

Result<void*> HostDevice::allocate_async(std::size_t bytes, Stream&) {
  return take(bytes);
}

std::error_code HostDevice::free_async(void* ptr, Stream& stream) {
  if (ptr == nullptr) return {};
  if (stream.backend() != Backend::host || stream.impl() == nullptr)
    return make_error_code(Errc::invalid_argument);
  return static_cast<HostStream*>(stream.impl())->enqueue_cleanup([state = state_, ptr] {
    give_back(*state, ptr);
    return std::error_code{};
  });
}

Result<MemoryInfo> HostDevice::memory_info() {
  return MemoryInfo{state_->capacity - state_->used.load(), state_->capacity};
}

}  // namespace stoker::devices::detail
