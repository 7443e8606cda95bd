// `stoker bench serve`; see serve_bench.hpp.
#include "tools/bench/serve_bench.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "common/host_memory_limit.hpp"
#include "devices/device_set.hpp"
#include "engine/engine.hpp"
#include "engine/groth16/toy_circuit.hpp"
#include "engine/groth16/toy_key.hpp"
#include "engine/groth16/wtns_file.hpp"
#include "engine/groth16/zkey_file.hpp"
#include "engine/workloads/groth16_workload.hpp"
#include "tools/bench/bench_stats.hpp"
#include "tools/cli/command_line.hpp"
#include "tools/serve/http_client.hpp"

namespace stoker::tools {
namespace {

namespace fs = std::filesystem;
namespace g16 = engine::groth16;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr const char* kHelp =
    "usage: stoker bench serve [--log-n 12,16] [--proofs N] [--clients 1,8,64]\n"
    "                          [--zkey K --wtns W] [--json] [engine options]\n"
    "\n"
    "The same Groth16 proofs through the in-process API (one engine; each client a\n"
    "thread that reads its proof's witness file, submits the proof as a job and waits\n"
    "for it) and through `stoker serve` (a daemon process on a Unix socket; each client\n"
    "submits the witness file's path and long-polls its proofs): proofs per second of\n"
    "both, their ratio, the daemon's p50 and p99 latency from submission to the proof,\n"
    "and the p50 of the daemon's own timings_ms.total (acceptance to the proof's end,\n"
    "before its journal commit and the answer). The key is resident in both before any\n"
    "proof is timed, and one proof warms each up first.\n"
    "  --log-n    toy keys of 2^K (testing-only keys made here; default 12,16)\n"
    "  --zkey/--wtns  a real key and witness instead of toy keys\n"
    "  --proofs   proofs per figure (default 32)\n"
    "  --clients  concurrent clients through the daemon (default 1,8,64)\n";

std::vector<unsigned> parse_list(std::string_view text, unsigned lo, unsigned hi, bool& ok) {
  std::vector<unsigned> out;
  std::stringstream ss{std::string(text)};
  std::string item;
  ok = true;
  while (std::getline(ss, item, ',')) {
    try {
      std::size_t used = 0;
      const unsigned long v = std::stoul(item, &used);
      if (used != item.size() || v < lo || v > hi) ok = false;
      out.push_back(static_cast<unsigned>(v));
    } catch (const std::exception&) {
      ok = false;
    }
  }
  return out.empty() ? (ok = false, out) : out;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// Proofs per second through the API, for each count of clients: that many
// threads, each reading one proof's witness from its file (as `stoker
// prove` does and the daemon does for each request), submitting the proof
// as a job and waiting for it before the next, as a daemon's clients do;
// one warm-up proof first.
Result<std::vector<double>> in_process(const engine::Config& config, const std::string& zkey,
                                       const std::string& wtns, unsigned proofs,
                                       const std::vector<unsigned>& client_counts) {
  auto key = g16::read_zkey(zkey, g16::PointCheck::trusted);
  if (!key) return key.error();
  // Each client holds one witness and its packed scalars at a time.
  std::error_code size_ec;
  const auto wtns_bytes = fs::file_size(wtns, size_ec);
  const unsigned most_clients = *std::max_element(client_counts.begin(), client_counts.end());
  if (Error e =
          common::check_host_memory(std::to_string(most_clients) + " clients' witnesses in process",
                                    std::size_t{most_clients} * (size_ec ? 0 : wtns_bytes) * 3 / 2))
    return e;
  boost::asio::io_context io;
  auto guard = boost::asio::make_work_guard(io);
  std::thread runner([&] { io.run(); });
  struct Join {
    decltype(guard)& g;
    std::thread& t;
    ~Join() {
      g.reset();
      t.join();
    }
  } join{guard, runner};
  auto engine = engine::Engine::create(io.get_executor(), config);
  if (!engine) return engine.error();
  auto resident = engine::workloads::load_groth16_key(
      **engine, std::make_shared<const g16::ProvingKey>(std::move(*key)));
  if (!resident) return resident.error();
  auto prove = [&](unsigned i) -> Error {
    auto witness = g16::read_wtns(wtns);
    if (!witness) return witness.error();
    engine::workloads::Groth16Options o;
    o.key = *resident;
    o.witnesses = {std::make_shared<const g16::WitnessValues>(std::move(*witness))};
    o.devices = &(*engine)->devices();
    o.name = "proof " + std::to_string(i);
    std::shared_ptr<engine::workloads::Groth16Run> run;
    auto job = engine::workloads::make_groth16_job(o, run);
    if (!job) return job.error();
    try {
      (*engine)->async_submit(std::move(*job), boost::asio::use_future).get();
    } catch (const std::exception& e) {
      return Error{Errc::kernel_failed, e.what()};
    }
    return {};
  };
  if (Error e = prove(0)) return e;
  std::vector<double> out;
  for (unsigned clients : client_counts) {
    std::mutex m;
    Error failure;
    const auto t0 = Clock::now();
    std::vector<std::thread> threads;
    for (unsigned c = 0; c < clients; ++c)
      threads.emplace_back([&, c] {
        for (unsigned p = c; p < proofs; p += clients)
          if (Error e = prove(p)) {
            std::lock_guard lock(m);
            failure = e;
            return;
          }
      });
    for (auto& t : threads) t.join();
    if (failure) return failure;
    out.push_back(proofs / std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return out;
}

struct DaemonFigure {
  unsigned clients = 0;
  double proofs_per_s = 0, p50_ms = 0, p99_ms = 0;
  // The daemon's own timings_ms.total (from acceptance to the proof's end,
  // before its journal commit and the answer): what p50_ms adds beyond it
  // is HTTP, the journal's synced commits and the client.
  double in_daemon_p50_ms = 0;
};

// A `stoker serve` child process with the same engine options.
class Daemon {
 public:
  Daemon(const fs::path& dir, const std::vector<fs::path>& allowed,
         const std::vector<std::string>& engine_args) {
    socket_ = (dir / "serve.sock").string();
    std::vector<std::string> args{"/proc/self/exe", "serve",       "--socket",
                                  socket_,          "--state-dir", dir.string()};
    for (const auto& a : allowed) {
      args.push_back("--allow-dir");
      args.push_back(a.string());
    }
    args.insert(args.end(), engine_args.begin(), engine_args.end());
    const std::string log = (dir / "serve.log").string();
    // The child's freopen would flush what this process has buffered.
    std::fflush(stdout);
    std::fflush(stderr);
    pid_ = ::fork();
    if (pid_ == 0) {
      (void)std::freopen(log.c_str(), "w", stdout);
      (void)std::freopen(log.c_str(), "a", stderr);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  ~Daemon() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  const std::string& socket() const { return socket_; }
  bool wait_ready() const {
    auto c = serve::HttpClient::to("unix:" + socket_);
    for (int i = 0; i < 3000; ++i) {
      auto r = c->request("GET", "/healthz", {}, "application/json", std::chrono::seconds(5));
      if (r && r->status == 200) return true;
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

 private:
  std::string socket_;
  pid_t pid_ = -1;
};

Result<DaemonFigure> through_daemon(const Daemon& d, const std::string& wtns, unsigned proofs,
                                    unsigned clients) {
  std::vector<double> latencies, in_daemon;
  std::mutex m;
  std::string failure;
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (unsigned c = 0; c < clients; ++c)
    threads.emplace_back([&, c] {
      auto client = serve::HttpClient::to("unix:" + d.socket()).value();
      const json req{{"key", "k"}, {"witness", {{"path", wtns}}}};
      for (unsigned p = c; p < proofs; p += clients) {
        const auto start = Clock::now();
        auto r = client.request("POST", "/v1/proofs", req.dump());
        std::string why;
        double total_ms = 0;
        if (!r || r->status != 202) {
          why = r ? r->body : r.error().what();
        } else {
          const std::string id = json::parse(r->body)["id"];
          for (;;) {
            auto w = client.request("GET", "/v1/proofs/" + id + "?wait_ms=60000");
            if (!w) {
              why = w.error().what();
              break;
            }
            const auto view = json::parse(w->body, nullptr, false);
            const std::string state = view.is_object() ? view.value("state", "") : "";
            if (state == "done") {
              const auto t = view.find("timings_ms");
              if (t != view.end() && t->is_object()) total_ms = t->value("total", 0.0);
              break;
            }
            if (state != "queued" && state != "running") {
              why = w->body;
              break;
            }
          }
        }
        std::lock_guard lock(m);
        if (!why.empty()) {
          failure = why;
          return;
        }
        latencies.push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - start).count());
        in_daemon.push_back(total_ms);
      }
    });
  for (auto& t : threads) t.join();
  if (!failure.empty()) return Error{Errc::kernel_failed, "through the daemon: " + failure};
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  return DaemonFigure{clients, proofs / s, percentile(latencies, 0.5), percentile(latencies, 0.99),
                      percentile(in_daemon, 0.5)};
}

}  // namespace

int bench_serve_command(int argc, char** argv) {
  // The engine options go to both the in-process engine and the daemon.
  std::vector<std::string> engine_args;
  std::vector<std::string> own;
  const std::vector<std::string> own_names{"--log-n", "--proofs", "--clients", "--zkey", "--wtns"};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const std::string name = a.substr(0, a.find('='));
    const bool mine = std::find(own_names.begin(), own_names.end(), name) != own_names.end() ||
                      name == "--json" || name == "--help" || name == "-h";
    auto& to = mine ? own : engine_args;
    to.push_back(a);
    if (a.find('=') == std::string::npos && name != "--json" && name != "--help" && name != "-h" &&
        i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0)
      to.push_back(argv[++i]);
  }
  CommandLine cl("bench serve", kHelp);
  engine::Config config;
  std::string log_text = "12,16", clients_text = "1,8,64", zkey, wtns;
  unsigned proofs = 32;
  bool as_json = false;
  cl.value("--log-n", log_text);
  cl.value("--clients", clients_text);
  cl.number("--proofs", proofs, 1u, 100000u);
  cl.value("--zkey", zkey);
  cl.value("--wtns", wtns);
  cl.flag("--json", as_json);
  cl.engine_options(config);
  std::vector<std::string> all = own;
  all.insert(all.end(), engine_args.begin(), engine_args.end());
  if (auto rc = cl.parse(all)) return *rc;
  bool ok = true;
  const auto log_ns = parse_list(log_text, 4, 28, ok);
  if (!ok) return cl.usage_error("--log-n '" + log_text + "' is not a list of 4..28");
  const auto client_counts = parse_list(clients_text, 1, 1024, ok);
  if (!ok) return cl.usage_error("--clients '" + clients_text + "' is not a list of 1..1024");
  if (zkey.empty() != wtns.empty()) return cl.usage_error("--zkey and --wtns go together");

  std::string templ = (fs::temp_directory_path() / "stoker-bench-serve-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr) return cl.failure("cannot make a temporary directory");
  const fs::path dir = templ;
  struct Cleanup {
    fs::path p;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  } cleanup{dir};

  json rows = json::array();
  // A key and witness per row group: the files given, or a toy key per
  // size, made just before its rows (a 2^24 key is minutes on the CPU and
  // 13 GB of file: the smaller sizes' rows come first) with its points on
  // the GPUs where the engine runs on CUDA, as bench prove makes them.
  struct Input {
    std::string label;
    unsigned log_n = 0;  // 0: the files given
  };
  std::vector<Input> inputs;
  if (!zkey.empty())
    inputs.push_back({fs::path(zkey).filename().string(), 0});
  else
    for (unsigned log_n : log_ns) inputs.push_back({"toy 2^" + std::to_string(log_n), log_n});
  g16::ToyKeyOptions key_options;
  if (config.devices.backend != devices::BackendChoice::host) {
    key_options.cuda_ordinals = config.devices.cuda_ordinals;
    if (key_options.cuda_ordinals.empty())
      for (int d = 0; d < devices::cuda_device_count(); ++d) key_options.cuda_ordinals.push_back(d);
  }
  auto make_files = [&](unsigned log_n) -> Result<std::pair<std::string, std::string>> {
    const auto t0 = Clock::now();
    const std::size_t n = std::size_t{1} << log_n;
    const g16::ToyCircuitShape shape{.constraints = n - 2, .num_public = 1};
    key_options.log_n = log_n;
    if (Error e = common::check_host_memory(
            "a toy key of 2^" + std::to_string(log_n) + " points with its circuit",
            g16::toy_setup_host_bytes(shape, g16::KeyFormat::snarkjs, log_n,
                                      key_options.cuda_ordinals.size())))
      return e;
    const auto circuit = g16::make_toy_circuit(shape, 1);
    auto key = g16::make_toy_key(circuit.r1cs, g16::ToySecrets::from_seed(1),
                                 g16::KeyFormat::snarkjs, key_options);
    if (!key) return key.error();
    const auto k = (dir / ("toy" + std::to_string(log_n) + ".zkey")).string();
    const auto w = (dir / ("toy" + std::to_string(log_n) + ".wtns")).string();
    if (Error e = g16::write_zkey(k, *key)) return e;
    if (Error e = g16::write_wtns(w, circuit.witness)) return e;
    std::fprintf(stderr,
                 "stoker bench serve: a toy key of 2^%u points made and written in %.2f s\n", log_n,
                 std::chrono::duration<double>(Clock::now() - t0).count());
    return std::pair{k, w};
  };
  if (!as_json) {
    std::printf("%-14s %7s %12s %12s %7s %10s %10s %14s\n", "key", "clients", "daemon p/s",
                "in-proc p/s", "ratio", "p50 ms", "p99 ms", "in-daemon p50");
    std::fflush(stdout);
  }
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const std::string& label = inputs[k].label;
    std::pair<std::string, std::string> files;
    if (inputs[k].log_n) {
      auto made = make_files(inputs[k].log_n);
      if (!made) return cl.failure(label + ": " + made.error().what());
      files = *made;
    } else {
      files = {fs::absolute(zkey).string(), fs::absolute(wtns).string()};
    }
    auto api = in_process(config, files.first, files.second, proofs, client_counts);
    if (!api) return cl.failure(label + ", in process: " + api.error().what());
    // A state directory per key: a daemon loads what its journal lists.
    const fs::path state = dir / ("state" + std::to_string(k));
    fs::create_directories(state);
    Daemon d(state, {fs::path(files.first).parent_path(), fs::path(files.second).parent_path()},
             engine_args);
    if (!d.wait_ready())
      return cl.failure("the daemon did not start (" + (state / "serve.log").string() + ")");
    auto client = serve::HttpClient::to("unix:" + d.socket()).value();
    auto loaded = client.request(
        "POST", "/v1/keys", json{{"name", "k"}, {"path", files.first}, {"format", "zkey"}}.dump());
    if (!loaded || loaded->status != 201)
      return cl.failure(label + ": the daemon did not load the key: " +
                        (loaded ? loaded->body : loaded.error().what()));
    if (auto warm = through_daemon(d, files.second, 1, 1); !warm)
      return cl.failure(label + ": " + warm.error().what());
    for (std::size_t i = 0; i < client_counts.size(); ++i) {
      const unsigned c = client_counts[i];
      const double in_proc = (*api)[i];
      auto fig = through_daemon(d, files.second, proofs, c);
      if (!fig) return cl.failure(label + ": " + fig.error().what());
      const double ratio = in_proc > 0 ? fig->proofs_per_s / in_proc : 0;
      rows.push_back(json{{"key", label},
                          {"clients", c},
                          {"proofs", proofs},
                          {"daemon_proofs_per_s", fig->proofs_per_s},
                          {"in_process_proofs_per_s", in_proc},
                          {"ratio", ratio},
                          {"p50_ms", fig->p50_ms},
                          {"p99_ms", fig->p99_ms},
                          {"in_daemon_p50_ms", fig->in_daemon_p50_ms}});
      if (!as_json) {
        std::printf("%-14s %7u %12.2f %12.2f %7.3f %10.1f %10.1f %14.1f\n", label.c_str(), c,
                    fig->proofs_per_s, in_proc, ratio, fig->p50_ms, fig->p99_ms,
                    fig->in_daemon_p50_ms);
        std::fflush(stdout);  // each row as it is measured, also into a pipe
      }
    }
    // This size's files are not needed again: a 2^24 zkey is 13 GB.
    if (inputs[k].log_n) {
      std::error_code ec;
      fs::remove(files.first, ec);
      fs::remove(files.second, ec);
    }
  }
  if (as_json) std::printf("%s\n", json{{"ok", true}, {"rows", rows}}.dump(2).c_str());
  return 0;
}

}  // namespace stoker::tools
