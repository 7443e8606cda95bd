// with_memory_guard(command, body): a command's last word on host memory.
// Commands check what they know the size of before they allocate it, and
// name it where the system refuses it anyway (common/host_memory_limit.hpp).
// What neither foresaw (an allocation deep in a library) throws
// std::bad_alloc; here that becomes the command's failure in words, the
// limit named: "stoker bench ntt: the system refused host memory; the
// address-space limit (ulimit -v) is 2048000000 bytes (1.9 GiB), 1971322880
// bytes (1.8 GiB) of it in use", exit status 1.
#pragma once

#include <cstdio>
#include <new>
#include <string>
#include <string_view>

#include "common/host_memory_limit.hpp"

namespace stoker::tools {

template <typename Body>
int with_memory_guard(std::string_view command, Body&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    const Error e = common::host_memory_refused("stoker " + std::string(command));
    std::fprintf(stderr, "%s\n", e.what().c_str());
    return 1;
  }
}

}  // namespace stoker::tools
