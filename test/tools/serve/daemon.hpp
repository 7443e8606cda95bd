// A `stoker serve` process for the tests: started on the host backend with
// a fresh state directory (or a given one, for restarts), reached through
// HttpClient over its Unix socket, stopped with a signal.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tools/serve/http_client.hpp"

namespace stoker::test {

namespace fs = std::filesystem;

// A directory removed with everything in it at the end of the test.
class ScratchDir {
 public:
  ScratchDir() {
    std::string templ = (fs::temp_directory_path() / "stoker-serve-XXXXXX").string();
    path_ = ::mkdtemp(templ.data());
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

class Daemon {
 public:
  // `extra`: more options for `stoker serve`; `socket`: its --socket
  // (default: stoker.sock in the state directory).
  Daemon(const fs::path& state_dir, std::vector<std::string> extra = {}, fs::path socket = {})
      : state_dir_(state_dir), socket_(socket.empty() ? state_dir / "stoker.sock" : socket) {
    std::vector<std::string> args{STOKER_BINARY,   "serve",     "--backend",
                                  "host",          "--state-dir", state_dir.string(),
                                  "--socket",      socket_.string(), "--allow-dir",
                                  STOKER_GROTH16_DATA_DIR, "--allow-dir", state_dir.string()};
    for (auto& e : extra) args.push_back(std::move(e));
    log_ = state_dir / ("daemon-" + std::to_string(starts_++) + ".log");
    pid_ = ::fork();
    if (pid_ == 0) {
      const std::string log = log_.string();
      std::FILE* f = std::freopen(log.c_str(), "a", stderr);
      (void)f;
      (void)std::freopen(log.c_str(), "a", stdout);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    client_ = serve::HttpClient::to("unix:" + socket_.string()).value();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      auto r = client_->request("GET", "/healthz", {}, "application/json",
                                std::chrono::seconds(5));
      if (r && r->status == 200) return;
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        return;  // exited: started() says so
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~Daemon() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  const fs::path& socket() const { return socket_; }
  std::string log() const {
    std::string out, line;
    if (std::FILE* f = std::fopen(log_.c_str(), "r")) {
      char buf[4096];
      std::size_t n;
      while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
      std::fclose(f);
    }
    return out;
  }

  // Waits for the process to exit by itself; its exit status (-1: killed).
  int wait_exit() {
    if (pid_ <= 0) return exit_status_;
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // Sends `signo` and waits for the exit status (-1: killed by a signal).
  int stop(int signo = SIGTERM) {
    if (pid_ <= 0) return -1;
    ::kill(pid_, signo);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  struct Reply {
    unsigned status = 0;
    nlohmann::json body;
    std::string text;
  };
  Reply call(const std::string& method, const std::string& target, const std::string& body = {},
             const std::string& type = "application/json") const {
    auto r = client_->request(method, target, body, type);
    Reply out;
    if (!r) {
      out.text = r.error().what();
      return out;
    }
    out.status = r->status;
    out.text = r->body;
    out.body = nlohmann::json::parse(r->body, nullptr, false);
    return out;
  }
  Reply call(const std::string& method, const std::string& target, const nlohmann::json& body) const {
    return call(method, target, body.dump());
  }

 private:
  static inline int starts_ = 0;
  fs::path state_dir_, socket_, log_;
  pid_t pid_ = -1;
  int exit_status_ = -1;  // of a process that exited while starting
  std::optional<serve::HttpClient> client_;
};

inline std::string data_file(const std::string& name) {
  return std::string(STOKER_GROTH16_DATA_DIR) + "/" + name;
}

}  // namespace stoker::test
