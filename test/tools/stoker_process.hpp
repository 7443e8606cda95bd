// Runs the stoker binary (STOKER_BINARY) as a user would, through a shell,
// and keeps what it printed on each channel apart: tests of the command
// line check which channel a message went to as well as the exit status.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace stoker::test {

struct Outcome {
  int status = -1;  // the exit status; -1 when killed by a signal
  int signal = 0;   // the signal that ended it, if one did
  std::string out, err;
  std::string both() const { return out + err; }
};

// `shell_line` run by /bin/sh; stdout through a pipe, stderr through a file.
inline Outcome run_shell(const std::string& shell_line) {
  namespace fs = std::filesystem;
  const fs::path err_file =
      fs::temp_directory_path() / ("stoker_err_" + std::to_string(::getpid()) + ".txt");
  Outcome r;
  const std::string cmd = "(" + shell_line + ") 2>" + err_file.string();
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  for (std::size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) r.out.append(buf.data(), n);
  const int st = pclose(p);
  if (WIFEXITED(st)) {
    r.status = WEXITSTATUS(st);
    // The shell reports a child killed by signal S as 128 + S.
    if (r.status > 128) r.signal = r.status - 128;
  }
  std::ifstream f(err_file);
  r.err.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  fs::remove(err_file);
  return r;
}

// Whether `text` holds `part`: what the tests ask of a message.
inline bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The lines of `text` (a trailing newline ends the last one): a failure is
// one line on stderr.
inline int lines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

// `stoker <args>`, with `env` ("NAME=value ...") before it.
inline Outcome run_stoker(const std::string& args, const std::string& env = "") {
  return run_shell((env.empty() ? "" : "env " + env + " ") + STOKER_BINARY + " " + args);
}

}  // namespace stoker::test
