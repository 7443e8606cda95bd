// SignalWatch: lets a command do something before an interrupt ends it,
// such as telling a daemon to drop the work the command asked for.
//
// While a SignalWatch lives, SIGINT, SIGTERM and SIGHUP do not end the
// process: a thread of its own takes them (sigtimedwait), and the first one
// is handed to `on_signal` on that thread. From then on those signals have
// their default action again on that thread, so a second one ends the
// process at once, even while `on_signal` is still busy. Once the command's
// work is over, end_as_taken() ends the process as the first signal would
// have (the shell sees 130 after a Ctrl-C).
//
// Construct it on the thread that runs the command, before that thread
// starts others: the signals are blocked there and in the threads it starts
// afterwards, and the destructor restores that thread's mask. Destruction
// waits for `on_signal` to return. Not copyable; one at a time per process.
#pragma once

#include <signal.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace stoker::tools {

class SignalWatch {
 public:
  explicit SignalWatch(std::function<void(int signo)> on_signal);
  ~SignalWatch();
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;

  // The first signal taken, or 0.
  int taken() const noexcept { return taken_.load(); }

  // Stops the watch and ends the process by the first signal taken, with
  // its default action; returns at once when none was taken.
  void end_as_taken();

 private:
  void watch();
  void stop();

  std::function<void(int)> on_signal_;
  sigset_t signals_{};
  sigset_t previous_{};
  std::atomic<int> taken_{0};
  std::mutex mutex_;
  std::condition_variable stopped_cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace stoker::tools
