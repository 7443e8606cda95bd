// `stoker serve`: the daemon; see tools/serve/ and docs/SERVE.md.
#include "tools/commands/serve_command.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "tools/cli/command_line.hpp"
#include "tools/serve/api.hpp"
#include "tools/serve/http_server.hpp"
#include "tools/serve/metrics.hpp"
#include "tools/serve/proof_service.hpp"
#include "tools/serve/sqlite_journal.hpp"
#include "tools/serve/state_dir_lock.hpp"
#include "tools/serve/token_file.hpp"

namespace stoker::tools {
namespace {

namespace fs = std::filesystem;

constexpr const char* kHelp =
    "usage: stoker serve --state-dir DIR (--socket PATH | --listen HOST:PORT --token-file F)\n"
    "                    [--allow-dir DIR]... [options] [engine options]\n"
    "\n"
    "One daemon per node: it owns every device through one engine, keeps proving keys\n"
    "resident and proves Groth16 for every client, over HTTP/1.1 with JSON bodies\n"
    "(docs/SERVE.md lists the endpoints).\n"
    "  --socket PATH         listen on a Unix socket, mode 0660: its group is who may use it\n"
    "  --listen HOST:PORT    also (or only) TCP; needs --token-file\n"
    "  --token-file F        the bearer token TCP clients must send (the file's first line)\n"
    "  --state-dir DIR       the journal (SQLite) and copies of witnesses sent as bodies;\n"
    "                        what was accepted there runs again after a restart\n"
    "  --allow-dir DIR       key and witness paths must lie under one of these (repeatable;\n"
    "                        none: only witnesses sent as bodies or in shared memory)\n"
    "  --keep-results S      seconds a finished proof's result stays (default 604800, a week)\n"
    "  --drain-timeout S     on SIGTERM, seconds to let running proofs end (default 60); what\n"
    "                        is still running then is queued again for the next start\n"
    "  --max-in-flight N     proofs read and in the engine at once (default: the engine's\n"
    "                        lookahead plus one per device)\n"
    "  --max-body-bytes N    the largest request body (default 268435456)\n"
    "  --request-timeout-ms N  a request's header and body must arrive within this (30000)\n"
    "  --read-threads N      threads that read keys and witnesses and build proofs' jobs\n"
    "                        (default: one per proof in flight, and one for key loads)\n"
    "  --trust-keys          skip the curve and subgroup checks of keys' points (without it\n"
    "                        they are checked once per key file: the digests of the files\n"
    "                        checked are kept in DIR/checked-keys)\n"
    "  --no-verify           skip the pairing check of each proof before it is returned\n"
    "\n"
    "SIGTERM or SIGINT: stop accepting, let running proofs end, exit 0.\n";

}  // namespace

int serve_command(int argc, char** argv) {
  CommandLine cl("serve", kHelp);
  engine::Config config;
  std::string socket, listen, token_file, state_dir;
  std::vector<std::string> allow_dirs;
  std::uint64_t keep_results = 7 * 24 * 3600, drain_timeout = 60;
  std::size_t max_in_flight = 0, max_body = std::size_t{256} << 20;
  std::uint64_t request_timeout_ms = 30'000;
  unsigned workers = 0;
  bool trust_keys = false, no_verify = false;
  cl.value("--socket", socket);
  cl.value("--listen", listen);
  cl.value("--token-file", token_file);
  cl.value("--state-dir", state_dir);
  cl.values("--allow-dir", allow_dirs);
  cl.number("--keep-results", keep_results, std::uint64_t{0}, std::uint64_t{10} * 365 * 24 * 3600);
  cl.number("--drain-timeout", drain_timeout, std::uint64_t{0}, std::uint64_t{24} * 3600);
  cl.number("--max-in-flight", max_in_flight, std::size_t{0}, std::size_t{1} << 20);
  cl.number("--max-body-bytes", max_body, std::size_t{1}, std::size_t{1} << 40);
  cl.number("--request-timeout-ms", request_timeout_ms, std::uint64_t{1}, std::uint64_t{3'600'000});
  cl.number("--read-threads", workers, 0u, 256u);
  cl.flag("--trust-keys", trust_keys);
  cl.flag("--no-verify", no_verify);
  cl.engine_options(config);
  if (auto rc = cl.parse(argc, argv)) return *rc;
  if (state_dir.empty()) return cl.usage_error("--state-dir is required");
  if (socket.empty() && listen.empty()) return cl.usage_error("give --socket PATH or --listen HOST:PORT");
  if (!listen.empty() && token_file.empty())
    return cl.usage_error("--listen needs --token-file: TCP has no other access control");
  if (listen.empty() && !token_file.empty()) return cl.usage_error("--token-file goes with --listen");

  serve::ServiceOptions options;
  std::error_code ec;
  if (!fs::is_directory(state_dir, ec))
    return cl.usage_error("--state-dir " + state_dir + " is not a directory");
  options.state_dir = fs::canonical(state_dir, ec);
  for (const auto& dir : allow_dirs) {
    if (!fs::is_directory(dir, ec)) return cl.usage_error("--allow-dir " + dir + " is not a directory");
    options.allow_dirs.push_back(fs::canonical(dir, ec));
  }
  options.keep_results = std::chrono::seconds(keep_results);
  options.max_in_flight = max_in_flight;
  options.verify = !no_verify;
  options.trust_keys = trust_keys;
  options.workers = workers;

  serve::HttpServerOptions http;
  http.socket_path = socket;
  http.listen = listen;
  http.max_body_bytes = max_body;
  http.request_timeout = std::chrono::milliseconds(request_timeout_ms);
  if (!token_file.empty()) {
    auto token = serve::read_token_file(token_file, serve::TokenUse::daemon);
    if (!token) return cl.usage_error(token.error().what());
    http.token = std::move(*token);
  }

  // What the daemon writes (the journal, clients' witnesses) is its own and
  // its clients' business, whoever started it (the systemd unit's UMask).
  ::umask(0077);
  // One daemon per state directory, before the journal is read.
  auto lock = serve::StateDirLock::acquire(options.state_dir);
  if (!lock) return cl.failure(lock.error().what());
  auto journal = serve::SqliteJournal::open(options.state_dir.string());
  if (!journal) return cl.failure(journal.error().what());

  boost::asio::io_context io;
  auto engine = engine::Engine::create(io.get_executor(), config);
  if (!engine) return cl.failure(engine.error().what());
  serve::Metrics metrics;
  serve::ProofService service(io.get_executor(), **engine, **journal, metrics, options);
  auto server = serve::HttpServer::start(io.get_executor(), http,
                                         serve::make_api(service, metrics));
  if (!server) return cl.failure(server.error().what());
  if (Error e = service.recover()) return cl.failure("the journal: " + e.what());

  // Finished proofs' results go once they are older than --keep-results,
  // looked for every tenth of that (at least every second, at most every
  // ten minutes), so a result outlives its time by at most 10 %.
  const auto purge_every = std::clamp<std::chrono::seconds>(
      std::chrono::seconds(keep_results / 10), std::chrono::seconds(1), std::chrono::minutes(10));
  boost::asio::steady_timer purge(io);
  std::function<void()> purge_now = [&] {
    const auto cutoff = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count() -
                        static_cast<std::int64_t>(keep_results) * 1000;
    (*journal)->purge_finished_before(cutoff);
    purge.expires_after(purge_every);
    purge.async_wait([&](boost::system::error_code e) {
      if (!e) purge_now();
    });
  };
  purge_now();

  const auto& devices = (*engine)->devices();
  std::printf("stoker serve: listening on %s%s%s; %zu %s device%s; state in %s\n",
              socket.empty() ? "" : ("unix:" + socket).c_str(),
              (!socket.empty() && !listen.empty()) ? " and " : "",
              listen.empty() ? ""
                             : ("tcp:" + listen.substr(0, listen.rfind(':') + 1) +
                                std::to_string((*server)->tcp_port()))
                                   .c_str(),
              devices.size(), devices.backend() == devices::Backend::cuda ? "CUDA" : "host",
              devices.size() == 1 ? "" : "s", options.state_dir.c_str());
  std::fflush(stdout);

  bool stopping = false;
  boost::asio::signal_set signals(io, SIGTERM, SIGINT);
  std::function<void()> wait_signal = [&] {
    signals.async_wait([&](boost::system::error_code e, int signo) {
      if (e) return;
      if (stopping) {
        // A second signal: stop waiting for the drain.
        std::fprintf(stderr, "stoker serve: %s again: stopping now\n", strsignal(signo));
        io.stop();
        return;
      }
      stopping = true;
      std::fprintf(stderr, "stoker serve: %s: draining (at most %llu s)\n", strsignal(signo),
                   static_cast<unsigned long long>(drain_timeout));
      (*server)->stop_accepting();
      service.drain(std::chrono::seconds(drain_timeout), [&] {
        purge.cancel();
        (*engine)->async_shutdown([&](boost::system::error_code) {
          (*server)->close_connections();
          signals.cancel();
          io.stop();
        });
      });
      wait_signal();
    });
  };
  wait_signal();
  io.run();
  std::fprintf(stderr, "stoker serve: stopped\n");
  return 0;
}

}  // namespace stoker::tools
