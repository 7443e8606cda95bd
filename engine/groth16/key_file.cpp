// A proving key's file opened for a load onto devices; see key_file.hpp.
#include "engine/groth16/key_file.hpp"

#include <string>

namespace stoker::engine::groth16 {

const char* query_name(Query q) noexcept {
  switch (q) {
    case Query::h:
      return "H";
    case Query::l:
      return "L";
    case Query::a:
      return "A";
    case Query::b_g1:
      return "B_G1";
    case Query::b_g2:
      return "B_G2";
  }
  return "?";
}

std::size_t count_of(const QueryCounts& c, Query q) noexcept {
  switch (q) {
    case Query::h:
      return c.h;
    case Query::l:
      return c.l;
    case Query::a:
      return c.a;
    case Query::b_g1:
      return c.b_g1;
    case Query::b_g2:
      return c.b_g2;
  }
  return 0;
}

Error KeyFile::unchanged() const {
  if (!expected_) return {};
  auto now = identity_of(fd(), path());
  if (!now) return now.error();
  if (!(*now == *expected_))
    return Error{Errc::io_error, path() + ": the file changed while it was read: its points may "
                                          "not be the ones its digest names; load it again"};
  return {};
}

Error KeyFile::out_of_query(Query q, bool g2, std::size_t first, std::size_t n) const {
  const std::size_t have = count_of(counts_, q);
  if ((q == Query::b_g2) == g2 && first <= have && n <= have - first) return {};
  return Error{Errc::invalid_argument,
               path() + ": " + query_name(q) + " points [" + std::to_string(first) + ", " +
                   std::to_string(first + n) + ") asked for " +
                   (g2 ? "as G2 points" : "as G1 points") + ", of " + std::to_string(have)};
}

}  // namespace stoker::engine::groth16
