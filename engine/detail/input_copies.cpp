#include "engine/detail/input_copies.hpp"

namespace stoker::engine::detail {

std::vector<DirectCopy> plan_input_copies(const StagingRing& ring, const LaunchRequest& r,
                                          std::byte* device_memory,
                                          const std::vector<std::size_t>& in_off, StagingPass& pass,
                                          LaunchResult& res) {
  const Partition& p = *r.partition;
  std::vector<StagingRing::InPlace> in_place(p.inputs.size());
  for (std::size_t i = 0; i < p.inputs.size(); ++i) {
    if (p.inputs[i].kind != InputKind::pageable) continue;
    in_place[i] = ring.register_in_place(r.input_sources[i], p.inputs[i].bytes, res.registrations);
    res.bytes_registered += in_place[i].interior;
  }
  // Pinned, registered and streamed inputs are copied by the feeder,
  // pageable ones by the pass.
  std::vector<DirectCopy> direct;
  for (std::size_t i = 0; i < p.inputs.size(); ++i) {
    std::byte* dst = device_memory + in_off[i];
    const std::byte* src = r.input_sources[i];
    const auto& in = p.inputs[i];
    const std::string input = "input " + std::to_string(i);
    if (const auto [head, interior] = in_place[i]; interior != 0) {
      const std::size_t tail = head + interior;
      ring.add_segment(pass, dst, src, head, "the head of " + input);
      direct.push_back({dst + head, src + head, interior, "registered " + input});
      ring.add_segment(pass, dst + tail, src + tail, in.bytes - tail, "the tail of " + input);
    } else if (in.kind == InputKind::pageable) {
      ring.add_segment(pass, dst, src, in.bytes, input);
    } else if (in.kind != InputKind::produced || !r.feed) {
      direct.push_back({dst, src, in.bytes, input});
    }  // else share by share (copy_streamed_shares)
  }
  return direct;
}

void take_producer_failure(const ShareFeed& feed, LaunchResult& res) {
  res.error = feed.error();
  res.message = feed.message();
  res.producer_failed = true;
}

bool copy_streamed_shares(devices::Stream& h2d, int device, const LaunchRequest& r,
                          std::byte* device_memory, const std::vector<std::size_t>& in_off,
                          LaunchResult& res) {
  const Partition& p = *r.partition;
  const ShareFeed& feed = *r.feed;
  for (std::size_t t = 0; t < feed.shares(); ++t) {
    if (!feed.wait_for(t)) {
      take_producer_failure(feed, res);
      return false;
    }
    for (std::size_t i = 0; i < p.inputs.size(); ++i) {
      if (p.inputs[i].kind != InputKind::produced) continue;
      const auto [lo, hi] = ProducerTask{t, feed.shares()}.range(p.inputs[i].bytes, feed.align());
      if (hi == lo) continue;
      if (auto ec = h2d.copy(device_memory + in_off[i] + lo, r.input_sources[i] + lo, hi - lo)) {
        res.error = ec;
        res.message = "device " + std::to_string(device) + ": H2D copy of input " +
                      std::to_string(i) + ", share " + std::to_string(t) + ": " + ec.message();
        return false;
      }
    }
  }
  return true;
}

}  // namespace stoker::engine::detail
