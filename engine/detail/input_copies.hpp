// How a partition's inputs reach its device memory on the H2D stream:
// pageable ones through the staging ring (their whole inner pages
// registered and copied in place where Config::pageable_inputs asks for
// it), pinned and registered ones copied straight from their source, and a
// streamed partition's produced inputs share by share as its producer
// ends them. Called on the device's feeder thread.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "devices/stream.hpp"
#include "engine/detail/device_runner.hpp"
#include "engine/detail/share_feed.hpp"
#include "engine/detail/staging_ring.hpp"

namespace stoker::engine::detail {

// An input, or a registered input's inner pages, copied straight from its
// source.
struct DirectCopy {
  std::byte* dst;
  const std::byte* src;
  std::size_t bytes;
  std::string what;  // for errors: "input 1", "registered input 0"
};

// Registers the pageable inputs in place where `ring` does that (`res`
// keeps the registrations and counts their bytes), adds what is staged to
// `pass`, and returns what is copied straight from its source. A streamed
// partition's produced inputs are in neither (copy_streamed_shares).
// Input i goes to device_memory + in_off[i].
std::vector<DirectCopy> plan_input_copies(const StagingRing& ring, const LaunchRequest& r,
                                          std::byte* device_memory,
                                          const std::vector<std::size_t>& in_off, StagingPass& pass,
                                          LaunchResult& res);

// A streamed partition's producer failed: the launch carries its error and
// nothing more runs on the device.
void take_producer_failure(const ShareFeed& feed, LaunchResult& res);

// The produced inputs of a streamed partition, share by share as they end;
// false when the producer failed (res says why), with the copies of the
// shares before enqueued. Errors name device `device`.
bool copy_streamed_shares(devices::Stream& h2d, int device, const LaunchRequest& r,
                          std::byte* device_memory, const std::vector<std::size_t>& in_off,
                          LaunchResult& res);

}  // namespace stoker::engine::detail
