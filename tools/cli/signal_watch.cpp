// SignalWatch; see signal_watch.hpp.
#include "tools/cli/signal_watch.hpp"

#include <pthread.h>
#include <unistd.h>

#include <chrono>

namespace stoker::tools {

namespace {

void default_action(int signo) {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(signo, &dfl, nullptr);
}

}  // namespace

SignalWatch::SignalWatch(std::function<void(int)> on_signal) : on_signal_(std::move(on_signal)) {
  sigemptyset(&signals_);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&signals_, s);
  ::pthread_sigmask(SIG_BLOCK, &signals_, &previous_);
  thread_ = std::thread([this] { watch(); });
}

SignalWatch::~SignalWatch() {
  stop();
}

void SignalWatch::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stopped_cv_.notify_all();
  thread_.join();
  ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

void SignalWatch::watch() {
  // Polled rather than woken: sigtimedwait cannot wait on the stop flag too.
  const timespec tick{0, 50'000'000};
  int signo = -1;
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
    }
    signo = ::sigtimedwait(&signals_, nullptr, &tick);
    if (signo > 0) break;
  }
  taken_.store(signo);
  // From here a second signal ends the process on this thread, whatever
  // on_signal_ is doing.
  for (int s : {SIGINT, SIGTERM, SIGHUP}) default_action(s);
  ::pthread_sigmask(SIG_UNBLOCK, &signals_, nullptr);
  on_signal_(signo);
  std::unique_lock lock(mutex_);
  stopped_cv_.wait(lock, [this] { return stopping_; });
}

void SignalWatch::end_as_taken() {
  stop();
  const int signo = taken_.load();
  if (signo == 0) return;
  default_action(signo);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, signo);
  ::pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  ::raise(signo);
  ::_exit(128 + signo);
}

}  // namespace stoker::tools
