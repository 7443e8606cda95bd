// A proving key's file opened for a load onto devices: everything but its
// queries' points read at once (the verifying key, beta_1, delta_1, the
// sizes, a zkey's coefficients), the points left in the file and read a
// range at a time, straight into the pinned blocks on their way to the
// devices (workloads::load_groth16_key's file form). The host then never
// holds the whole key (24-30 GB at 2^26) and reads each byte once, where
// read_zkey / read_params fill a ProvingKey's vectors that a load then
// copies again.
//
// Opening checks what a full read checks of the file's layout (the
// container, protocol, curve, counts and section sizes, truncation, bytes
// left over, a zkey's coefficients), so a file that opens reads whole
// unless it changes under the reader or holds a bad point: read() checks
// each point's encoding and coordinates (below q) and names the first bad
// one by file, query, index and byte, as the full readers do. Curve and
// subgroup checks are the load's (on the devices).
//
// Thread safety: read() may be called from several threads at once.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "common/error.hpp"
#include "engine/groth16/key_digest.hpp"
#include "engine/groth16/proving_key.hpp"
#include "kernels/g1.cuh"
#include "kernels/g2.cuh"

namespace stoker::engine::groth16 {

enum class Query { h, l, a, b_g1, b_g2 };

// The form of the coordinates read() gives: Montgomery, as the kernels hold
// them, or canonical, as a bellman file stores them, for a load that
// converts them where they land (kernels/fq_montgomery.hpp).
enum class PointForm { montgomery, canonical };

// "H", "L", "A", "B_G1", "B_G2".
const char* query_name(Query q) noexcept;

class KeyFile {
 public:
  virtual ~KeyFile() = default;

  // The key without its queries' points (empty vectors): the verifying key,
  // beta_1, delta_1, the sizes and a zkey's coefficients, until a load
  // takes those (below).
  const ProvingKey& head() const noexcept { return head_; }
  // A load that has built its matrices frees the coefficients (9 GB at
  // 2^26) before it reads the points; a later load of the same KeyFile is
  // then refused rather than given a key without them.
  void free_coefficients() noexcept {
    head_.coefficients = {};
    coefficients_freed_ = true;
  }
  bool coefficients_freed() const noexcept { return coefficients_freed_; }
  // How many points each query holds in the file.
  const QueryCounts& counts() const noexcept { return counts_; }
  virtual const std::string& path() const noexcept = 0;
  // The open file, the whole of it the key: what its digest and identity
  // are taken from (key_digest.hpp), so that they are this file's even if
  // its path names another one by then.
  virtual int fd() const noexcept = 0;

  // From now on each read() and read_b_g2() also checks, once its bytes are
  // in, that the file is still `id` (key_digest.hpp), and fails naming the
  // file if it is not: a load that trusts points because the file's digest
  // was checked before must read the bytes that were digested.
  void expect_unchanged(const FileIdentity& id) { expected_ = id; }

  // The form its points read at least cost in: a bellman file's canonical
  // (converting costs the CPU a Montgomery product a coordinate, most of
  // its share of a load), a zkey's Montgomery (as stored).
  virtual PointForm stored_form() const noexcept = 0;

  // Points [first, first + out.size()) of a G1 query (any but B_G2) into
  // `out`, on `threads` threads (0: the hardware's), in `form`: Montgomery,
  // or the stored form. The range must lie in the query (an error
  // otherwise). A B_G2 point's curve is left to the load's checks.
  virtual Error read(Query q, std::size_t first, std::span<kernels::G1Affine> out,
                     unsigned threads = 0, PointForm form = PointForm::montgomery) const = 0;
  // Points [first, first + out.size()) of B_G2.
  virtual Error read_b_g2(std::size_t first, std::span<kernels::G2Affine> out,
                          unsigned threads = 0, PointForm form = PointForm::montgomery) const = 0;

 protected:
  KeyFile() = default;
  // An error unless [first, first + n) lies in query q (as `g2` asks: B_G2
  // through read_b_g2, the others through read).
  Error out_of_query(Query q, bool g2, std::size_t first, std::size_t n) const;
  // After a read: an error if expect_unchanged() was given an identity the
  // file no longer has.
  Error unchanged() const;
  ProvingKey head_;
  QueryCounts counts_;
  bool coefficients_freed_ = false;
  std::optional<FileIdentity> expected_;
};

// The count of `q` in `c`.
std::size_t count_of(const QueryCounts& c, Query q) noexcept;

}  // namespace stoker::engine::groth16
