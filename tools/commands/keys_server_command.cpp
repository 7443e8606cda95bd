// `stoker keys load|list|evict`; see keys_server_command.hpp.
#include "tools/commands/keys_server_command.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "common/bytes_str.hpp"
#include "tools/cli/command_line.hpp"
#include "tools/commands/daemon_client.hpp"

namespace stoker::tools {

const char* const kKeysServerSynopsis =
    "       stoker keys load --server S --name N --path P --format zkey|bellman [--json]\n"
    "       stoker keys list --server S [--json]\n"
    "       stoker keys evict --server S --name N [--json]\n";

const char* const kKeysServerSubcommands =
    "  load       load a proving key resident in a daemon (`stoker serve`)\n"
    "  list       the keys a daemon holds\n"
    "  evict      free a daemon's key once the proofs that name it have ended\n";

namespace {

using json = nlohmann::json;

constexpr const char* kLoadHelp =
    "usage: stoker keys load --server S --name N --path P --format zkey|bellman [options]\n"
    "\n"
    "Has the daemon (`stoker serve`) read a proving key, check its points and make it\n"
    "resident on every device, under a name that `stoker prove --server S --key N`\n"
    "then proves with. Waits until the key is resident; loading a key that is loaded\n"
    "already from the same file is no second load. The key stays loaded across the\n"
    "daemon's restarts until `stoker keys evict`.\n"
    "  --name N         the key's name: 1-64 of A-Z a-z 0-9 . _ -\n"
    "  --path P         the key's file, which the daemon reads: it must lie under one of\n"
    "                   the daemon's --allow-dir; a relative path is taken from here\n"
    "  --format F       zkey (snarkjs) or bellman (.params)\n"
    "  --json           print the daemon's answer (JSON) instead of a line\n"
    "%s"
    "\n"
    "Prints the key's size, what it holds on each device and how long the load took.\n";

constexpr const char* kListHelp =
    "usage: stoker keys list --server S [options]\n"
    "\n"
    "The keys a daemon holds: name, state (loading, ready, evicting), format, the\n"
    "domain's size (log2), wires, and the bytes resident on each device.\n"
    "  --json           print the daemon's answer (JSON) instead of a table\n"
    "%s";

constexpr const char* kEvictHelp =
    "usage: stoker keys evict --server S --name N [options]\n"
    "\n"
    "Evicts a daemon's key: new proofs for it are refused at once, the ones accepted\n"
    "before run to their end, then every device's copy is freed. Waits for that.\n"
    "  --name N         the key's name\n"
    "  --json           print the daemon's answer (JSON) instead of a line\n"
    "%s";

std::string help(const char* text) {
  const int n = std::snprintf(nullptr, 0, text, kServerOptionsHelp);
  std::string out(static_cast<std::size_t>(n), '\0');
  std::snprintf(out.data(), out.size() + 1, text, kServerOptionsHelp);
  return out;
}

struct ServerArgs {
  std::string server, token_file;
  bool json = false;
};

void server_options(CommandLine& cl, ServerArgs& a) {
  cl.value("--server", a.server);
  cl.value("--token-file", a.token_file);
  cl.flag("--json", a.json);
}

template <typename T>
std::string field(const json& j, const char* name) {
  const auto it = j.find(name);
  if (it == j.end() || it->is_null()) return "-";
  if constexpr (std::is_same_v<T, std::string>)
    return it->is_string() ? it->get<std::string>() : it->dump();
  else
    return it->is_number() ? std::to_string(it->get<T>()) : it->dump();
}

// "zkey, 2^3 points, 4 wires, 2 public; 1152 bytes on each of 1 device"
std::string describe(const json& k) {
  const auto devices = k.value("devices", std::size_t{0});
  return k.value("format", std::string("?")) + ", 2^" + field<unsigned>(k, "log_n") + " points, " +
         field<std::size_t>(k, "wires") + " wires, " + field<std::size_t>(k, "public") +
         " public; " +
         common::bytes_with_units(k.value("resident_bytes_per_device", std::size_t{0})) +
         " resident on each of " + std::to_string(devices) +
         (devices == 1 ? " device" : " devices");
}

}  // namespace

int keys_load_command(int argc, char** argv) {
  CommandLine cl("keys load", help(kLoadHelp));
  ServerArgs a;
  std::string name, path, format;
  server_options(cl, a);
  cl.value("--name", name);
  cl.value("--path", path);
  cl.choice("--format", format, {"zkey", "bellman"});
  if (auto rc = cl.parse(argc, argv)) return *rc;
  if (name.empty()) return cl.usage_error("--name is required");
  if (path.empty()) return cl.usage_error("--path is required");
  if (format.empty()) return cl.usage_error("--format is required (zkey or bellman)");
  auto client = DaemonClient::connect(a.server, a.token_file);
  if (!client) return cl.usage_error(client.error().what());

  const std::string where = absolute_path(path);
  auto r = client->call("POST", "/v1/keys",
                        json{{"name", name}, {"path", where}, {"format", format}}.dump());
  if (!r) return cl.failure(r.error().what());
  if (a.json) {
    std::printf("%s\n", r->dump().c_str());
    return 0;
  }
  const bool created = r->value("created", true);
  // How its points were taken: checked as they reached the devices, or
  // trusted because the file's digest was checked before (or --trust-keys).
  const std::string points = r->value("points", std::string());
  char how[96] = "";
  if (points == "checked_before")
    std::snprintf(how, sizeof how, " (points checked before: its digest in %.1f ms)",
                  r->value("digest_ms", 0.0));
  else if (!points.empty())
    std::snprintf(how, sizeof how, " (points %s)", points.c_str());
  std::printf("key '%s' %s on %s: %s; read in %.1f ms, uploaded in %.1f ms%s\n", name.c_str(),
              created ? "loaded" : "was loaded already", client->server().c_str(),
              describe(*r).c_str(), r->value("read_ms", 0.0), r->value("upload_ms", 0.0), how);
  return 0;
}

int keys_list_command(int argc, char** argv) {
  CommandLine cl("keys list", help(kListHelp));
  ServerArgs a;
  server_options(cl, a);
  if (auto rc = cl.parse(argc, argv)) return *rc;
  auto client = DaemonClient::connect(a.server, a.token_file);
  if (!client) return cl.usage_error(client.error().what());

  auto r = client->call("GET", "/v1/keys", {}, "application/json", std::chrono::minutes(1));
  if (!r) return cl.failure(r.error().what());
  if (a.json) {
    std::printf("%s\n", r->dump().c_str());
    return 0;
  }
  const json keys = r->value("keys", json::array());
  if (keys.empty()) {
    std::printf("no keys on %s\n", client->server().c_str());
    return 0;
  }
  std::vector<std::vector<std::string>> rows{
      {"NAME", "STATE", "FORMAT", "LOG_N", "WIRES", "RESIDENT_BYTES_PER_DEVICE"}};
  for (const auto& k : keys)
    rows.push_back({field<std::string>(k, "name"), field<std::string>(k, "state"),
                    field<std::string>(k, "format"), field<unsigned>(k, "log_n"),
                    field<std::size_t>(k, "wires"),
                    field<std::size_t>(k, "resident_bytes_per_device")});
  std::vector<std::size_t> width(rows[0].size(), 0);
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    std::printf("%s\n", line.c_str());
  }
  return 0;
}

int keys_evict_command(int argc, char** argv) {
  CommandLine cl("keys evict", help(kEvictHelp));
  ServerArgs a;
  std::string name;
  server_options(cl, a);
  cl.value("--name", name);
  if (auto rc = cl.parse(argc, argv)) return *rc;
  if (name.empty()) return cl.usage_error("--name is required");
  auto client = DaemonClient::connect(a.server, a.token_file);
  if (!client) return cl.usage_error(client.error().what());

  auto r = client->call("DELETE", "/v1/keys/" + url_encode(name));
  if (!r) return cl.failure(r.error().what());
  if (a.json) {
    std::printf("%s\n", r->dump().c_str());
    return 0;
  }
  std::printf("key '%s' evicted from %s: %s freed on each device\n", name.c_str(),
              client->server().c_str(),
              common::bytes_with_units(r->value("freed_bytes_per_device", std::size_t{0})).c_str());
  return 0;
}

}  // namespace stoker::tools
