#include "tools/cli/temporary_files.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <mutex>

namespace stoker::tools {
namespace {

namespace fs = std::filesystem;

// A slot is free (0), being filled (1) or holds a path the handler removes (2).
struct Slot {
  std::atomic<int> state{0};
  char path[PATH_MAX];
};
Slot g_slots[kMaxTemporaries];

constexpr int kFatalSignals[] = {SIGHUP,  SIGINT,  SIGQUIT,   SIGILL,  SIGTRAP, SIGABRT, SIGBUS,
                                 SIGFPE,  SIGUSR1, SIGSEGV,   SIGUSR2, SIGPIPE, SIGALRM, SIGTERM,
                                 SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGSYS};

std::mutex g_mutex;  // guards the two below
int g_registered = 0;
struct sigaction g_previous[NSIG];
bool g_installed[NSIG];

void remove_temporaries(int sig) {
  for (auto& s : g_slots)
    if (s.state.load(std::memory_order_acquire) == 2) ::unlink(s.path);
  // The default action, once the handler returns: the signal is blocked
  // while it runs, so the raise is delivered then (a fault re-executes the
  // instruction and meets the default action the same way).
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  ::raise(sig);
}

void install() {
  for (const int sig : kFatalSignals) {
    struct sigaction now {};
    if (::sigaction(sig, nullptr, &now) != 0) continue;
    if ((now.sa_flags & SA_SIGINFO) || now.sa_handler != SIG_DFL) continue;
    struct sigaction ours {};
    ours.sa_handler = remove_temporaries;
    sigemptyset(&ours.sa_mask);
    if (::sigaction(sig, &ours, &g_previous[sig]) == 0) g_installed[sig] = true;
  }
}

void uninstall() {
  for (const int sig : kFatalSignals)
    if (g_installed[sig]) {
      ::sigaction(sig, &g_previous[sig], nullptr);
      g_installed[sig] = false;
    }
}

constexpr std::string_view kRandomChars =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

}  // namespace

TemporaryFile::TemporaryFile(std::string& path_template) {
  sigset_t fatal, before;
  sigemptyset(&fatal);
  for (const int sig : kFatalSignals) sigaddset(&fatal, sig);
  ::pthread_sigmask(SIG_BLOCK, &fatal, &before);
  fd_ = ::mkstemp(path_template.data());
  const int err = errno;
  if (fd_ >= 0 && path_template.size() < PATH_MAX)
    for (int i = 0; i < kMaxTemporaries; ++i) {
      int free = 0;
      if (!g_slots[i].state.compare_exchange_strong(free, 1)) continue;
      std::memcpy(g_slots[i].path, path_template.c_str(), path_template.size() + 1);
      slot_ = i;
      break;
    }
  if (slot_ >= 0) {
    std::lock_guard lock(g_mutex);
    if (g_registered++ == 0) install();
    g_slots[slot_].state.store(2, std::memory_order_release);
  }
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  errno = err;
}

TemporaryFile::~TemporaryFile() {
  if (slot_ < 0) return;
  std::lock_guard lock(g_mutex);
  g_slots[slot_].state.store(0, std::memory_order_release);
  if (--g_registered == 0) uninstall();
}

std::string temporary_template(const std::string& dir, const std::string& target) {
  return (fs::path(dir) / ("." + fs::path(target).filename().string() + "." +
                           std::to_string(::getpid()) + ".XXXXXX"))
      .string();
}

void sweep_stale_temporaries(const std::string& dir, const std::string& target) {
  const std::string prefix = "." + fs::path(target).filename().string() + ".";
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(prefix)) continue;
    // <pid>.XXXXXX after the prefix, XXXXXX as mkstemp fills it.
    const std::string_view rest = std::string_view(name).substr(prefix.size());
    const auto dot = rest.find('.');
    if (dot == 0 || dot == std::string_view::npos || rest.size() - dot - 1 != 6) continue;
    const std::string_view pid_text = rest.substr(0, dot), random = rest.substr(dot + 1);
    if (pid_text.find_first_not_of("0123456789") != std::string_view::npos ||
        random.find_first_not_of(kRandomChars) != std::string_view::npos || pid_text.size() > 9)
      continue;
    const pid_t pid = static_cast<pid_t>(std::stol(std::string(pid_text)));
    if (pid <= 0 || pid == ::getpid()) continue;
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    std::error_code removed;
    if (it->is_regular_file(removed)) fs::remove(it->path(), removed);
  }
}

}  // namespace stoker::tools
