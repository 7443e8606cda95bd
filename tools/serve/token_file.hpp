// The bearer token of a TCP daemon, read from a file by the daemon
// (`stoker serve --token-file`) and by its clients (`--token-file` of
// `stoker prove --server` and `stoker keys ... --server`): the file's first
// line, trailing spaces and CR removed.
#pragma once

#include <string>

#include "common/error.hpp"

namespace stoker::serve {

enum class TokenUse {
  client,  // any non-empty token: it is the caller's own secret to guard
  daemon,  // also at least 16 characters in a file no other user can read,
           // since the token is all that guards the TCP listener
};

// Errors name the option and the file: cannot be read, an empty first line;
// for the daemon also a short token or a file readable by group or others.
Result<std::string> read_token_file(const std::string& path, TokenUse use);

}  // namespace stoker::serve
