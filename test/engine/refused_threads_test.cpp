// An engine whose threads the system refuses (no address space left for
// their stacks) is an error naming the thread, never a hang: the threads
// already started end. Each try runs in a child process under an
// address-space limit a little above what the process maps, so that some
// of the engine's threads start and a later one is refused; the child is
// killed (and the test fails) if it does not answer in time.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "common/host_memory_limit.hpp"
#include "engine/engine.hpp"

namespace stoker::engine {
namespace {

struct Try {
  bool answered = false;  // false: killed after the timeout
  bool created = false;
  std::string error;
};

// Engine::create in a child under an address-space limit of what the
// child maps plus `headroom` bytes: a host device with many staging
// threads, 8 MiB of stack each.
Try create_with_headroom(std::size_t headroom) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    Config config;
    config.devices.backend = devices::BackendChoice::host;
    config.devices.host.device_count = 1;
    config.staging_threads = 64;
    config.worker_threads = 2;
    config.staging_chunk_bytes = 64 << 10;
    config.bind_threads = false;
    boost::asio::io_context io;
    rlimit limit{};
    getrlimit(RLIMIT_AS, &limit);
    limit.rlim_cur = common::mapped_bytes() + headroom;
    if (setrlimit(RLIMIT_AS, &limit) != 0) _exit(3);
    auto engine = Engine::create(io.get_executor(), config);
    const std::string text = engine ? "" : engine.error().what();
    if (!text.empty() && write(fds[1], text.data(), text.size()) < 0) _exit(4);
    _exit(engine ? 0 : 1);  // no clean-up: only the answer matters
  }
  close(fds[1]);
  Try t;
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  int status = 0;
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, 10) > 0) {
      char buf[512];
      const ssize_t n = read(fds[0], buf, sizeof buf);
      if (n > 0) text.append(buf, static_cast<std::size_t>(n));
    }
    if (waitpid(pid, &status, WNOHANG) == pid) {
      t.answered = true;
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
  }
  for (char buf[512];;) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  t.created = t.answered && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  t.error = text;
  return t;
}

TEST(RefusedThreads, AnEngineWhoseThreadsAreRefusedSaysWhichNeverHangs) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "an address-space limit does not work under a sanitizer";
#endif
  // From room for a few threads to room for all of them, in steps of one
  // stack: the refusal comes at every stage of creation, the middle of
  // the staging pool (64 threads, started after the workers and the
  // streams) included.
  bool in_staging_pool = false, created = false;
  for (std::size_t mib = 8; mib <= 1024 && !created && !in_staging_pool; mib += 8) {
    const Try t = create_with_headroom(mib << 20);
    ASSERT_TRUE(t.answered) << "Engine::create hung with " << mib
                            << " MiB of address space to spare";
    created = t.created;
    if (created || t.error.find("could not start") == std::string::npos) continue;
    EXPECT_NE(t.error.find(" thread"), std::string::npos) << t.error;
    EXPECT_NE(t.error.find(": Resource temporarily unavailable"), std::string::npos) << t.error;
    if (t.error.find("could not start thread stoker-stage-0 (staging thread ") != std::string::npos)
      in_staging_pool = true;
  }
  EXPECT_TRUE(in_staging_pool) << "no limit tried made the system refuse a staging thread";
}

}  // namespace
}  // namespace stoker::engine
