#include <algorithm>
#include <boost/asio/post.hpp>
#include <cstring>

#include "engine/detail/engine_core.hpp"
#include "engine/detail/guarded_call.hpp"
#include "engine/detail/nontemporal_copy.hpp"

namespace asio = boost::asio;

namespace stoker::engine::detail {

void EngineCore::copy_out(const Key& k) {
  auto& job = *jobs_.at(k.seq);
  auto& ps = job.parts[k.part];
  // Bounce copies into pageable destinations, then the workload's check, on
  // workers: the slot is free already. A large output is copied in pieces
  // on several workers at once (one memcpy thread moves ~10 GB/s, a GPU
  // returns 55); the last piece to finish runs the check.
  advance(job, ps, PartEvent::device_done);
  const auto& p = job.job.partitions[k.part];
  struct Piece {
    std::byte* dst;
    const std::byte* src;
    std::size_t bytes;
  };
  std::vector<Piece> pieces;
  std::size_t b = ps.input_blocks;
  for (const auto& out : p.outputs) {
    if (out.pinned) continue;
    const std::byte* src = ps.blocks[b++].data();
    const std::size_t count =
        std::clamp<std::size_t>(out.bytes / kBytesPerWorkerTask, 1, worker_count_);
    for (std::size_t i = 0; i < count; ++i) {
      const auto [lo, hi] = ProducerTask{i, count}.range(out.bytes, 64);  // same split rule
      pieces.push_back({out.destination + lo, src + lo, hi - lo});
    }
  }
  const std::size_t count = pieces.size();
  fan_out(
      count,
      [pieces = std::move(pieces)](std::size_t i) {
        // Non-temporal stores for large pieces: a plain copy first reads every
        // destination line it fills, a quarter more host memory traffic per
        // input byte of the synthetic job, on memory that the producers and
        // the DMA share (kNontemporalStoresFrom says where small ones go).
        const Piece& c = pieces[i];
        if (c.bytes >= kNontemporalStoresFrom)
          detail::nontemporal_copy(c.dst, c.src, c.bytes);
        else
          std::memcpy(c.dst, c.src, c.bytes);
        return std::error_code{};
      },
      [this, k, &p, verify = job.job.verify, &name = job.job.name](std::error_code) {
        Error e;
        std::string thrown;
        if (verify)
          if (auto ec = detail::guarded_call(thrown, verify, p, k.part))
            e = Error{ec, "job '" + name + "' partition " + std::to_string(k.part) +
                              (thrown.empty() ? " failed verification: " + ec.message()
                                              : ": its verify threw: " + thrown)};
        asio::post(io_, [this, k, e = std::move(e)]() mutable { finished(k, std::move(e)); });
      });
}

}  // namespace stoker::engine::detail
