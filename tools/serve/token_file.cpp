// read_token_file; see token_file.hpp.
#include "tools/serve/token_file.hpp"

#include <sys/stat.h>

#include <fstream>

namespace stoker::serve {

Result<std::string> read_token_file(const std::string& path, TokenUse use) {
  std::ifstream in(path);
  if (!in) return Error{Errc::invalid_argument, "--token-file " + path + ": cannot be read"};
  std::string token;
  std::getline(in, token);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
  if (token.empty())
    return Error{Errc::invalid_argument, "--token-file " + path + ": its first line is empty"};
  if (use == TokenUse::client) return token;
  if (token.size() < 16)
    return Error{Errc::invalid_argument,
                 "--token-file " + path + ": the token's first line has fewer than 16 characters"};
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (st.st_mode & 0077) != 0)
    return Error{Errc::invalid_argument, "--token-file " + path +
                                             " can be read by other users (chmod 600 it)"};
  return token;
}

}  // namespace stoker::serve
