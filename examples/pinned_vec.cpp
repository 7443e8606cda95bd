// A producer that fills its inputs itself, before submitting, into
// PinnedVec storage the engine hands out: the memory comes from the
// engine's pinned pool and counts against its host budget, so the engine's
// own partitions and the caller's vectors share one limit, and the DMA reads
// the vector in place (no staging copy). Moved into the job, each vector
// goes back to the pool as soon as its partition's copies are done.
#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "engine/engine.hpp"
#include "examples/invert_bytes.hpp"

int main() {
  auto config = stoker::Config::from_env();
  if (!config) {
    std::fprintf(stderr, "example_pinned_vec: %s\n", config.error().what().c_str());
    return 2;
  }
  boost::asio::io_context io;
  stoker::Engine engine(io.get_executor(), config.value());

  constexpr std::size_t kPartitions = 3, kWords = std::size_t{1} << 20;
  std::vector<std::vector<std::uint32_t>> out(kPartitions);
  stoker::Job job;
  job.name = "pinned-vec";
  for (std::size_t p = 0; p < kPartitions; ++p) {
    // Never waits: an error names the size and the budget when it cannot pay
    // now (async_make_pinned_vec waits for the budget instead).
    auto vec = engine.make_pinned_vec<std::uint32_t>(0);
    if (!vec) {
      std::fprintf(stderr, "example_pinned_vec: %s\n", vec.error().what().c_str());
      return 1;
    }
    vec->resize_for_overwrite(kWords);  // every word is written below: skip the zeroing
    for (std::size_t i = 0; i < kWords; ++i) (*vec)[i] = static_cast<std::uint32_t>(i * 3 + p);
    out[p].assign(kWords, 0);
    stoker::Partition part;
    part.inputs.push_back(stoker::Input::pinned(std::move(*vec)));
    part.work = stoker::examples::invert_bytes();
    part.outputs.push_back(stoker::Output::to(std::as_writable_bytes(std::span(out[p]))));
    job.partitions.push_back(std::move(part));
  }
  std::printf("example_pinned_vec: %zu bytes of the host budget held by the filled vectors\n",
              engine.stats().host_budget_in_use);

  int status = 1;
  engine.async_submit(std::move(job), [&](std::error_code ec, stoker::JobReport report) {
    if (ec) {
      std::fprintf(stderr, "example_pinned_vec: job failed: %s\n", report.error.c_str());
      return;
    }
    for (std::size_t p = 0; p < kPartitions; ++p)
      for (std::size_t i = 0; i < kWords; ++i)
        if (out[p][i] != ~static_cast<std::uint32_t>(i * 3 + p)) {
          std::fprintf(stderr, "example_pinned_vec: partition %zu word %zu is wrong\n", p, i);
          return;
        }
    std::printf("%s\n", stoker::engine::summarize(report).c_str());
    status = 0;
  });
  io.run();
  // The vectors went back to the pool with their partitions.
  if (!engine.stats().idle()) {
    std::fprintf(stderr, "example_pinned_vec: the engine still holds %zu bytes of its budget\n",
                 engine.stats().host_budget_in_use);
    return 1;
  }
  return status;
}
