// A custom partition whose input is produced by the engine's workers, the
// way a prover's synthesis threads would write a, b, c: the producer writes
// straight into pinned memory from the engine's pool, charged to its host
// budget, so nothing is copied twice. A split producer fills the input in
// shares on several workers at once; with share_align set, the engine copies
// each share to the device as soon as that share ends (the early upload).
#include <boost/asio/io_context.hpp>
#include <cstdio>
#include <vector>

#include "engine/engine.hpp"
#include "examples/invert_bytes.hpp"

namespace {
// What "synthesis" writes: a pure function of partition and index, so the
// result can be checked without keeping the input.
std::byte witness(std::size_t partition, std::size_t i) { return std::byte((i * 31 + partition) ^ 0x5a); }
}  // namespace

int main() {
  auto config = stoker::Config::from_env();
  if (!config) {
    std::fprintf(stderr, "example_producer: %s\n", config.error().what().c_str());
    return 2;
  }
  boost::asio::io_context io;
  stoker::Engine engine(io.get_executor(), config.value());

  constexpr std::size_t kPartitions = 3, kBytes = std::size_t{8} << 20, kAlign = 4096;
  std::vector<std::vector<std::byte>> out(kPartitions, std::vector<std::byte>(kBytes));
  stoker::Job job;
  job.name = "produced";
  for (std::size_t p = 0; p < kPartitions; ++p) {
    stoker::Partition part;
    part.inputs.push_back(stoker::Input::produced(kBytes));
    part.split_producer = [p](std::span<const std::span<std::byte>> produced,
                              stoker::engine::ProducerTask task) {
      const auto [begin, end] = task.range(produced[0].size(), kAlign);
      for (std::size_t i = begin; i < end; ++i) produced[0][i] = witness(p, i);
      return std::error_code{};
    };
    part.producer_tasks = 4;
    part.share_align = kAlign;  // promise: share t writes exactly task.range(bytes, kAlign)
    part.work = stoker::examples::invert_bytes();
    part.outputs.push_back(stoker::Output::to(out[p]));
    job.partitions.push_back(std::move(part));
  }

  int status = 1;
  engine.async_submit(std::move(job), [&](std::error_code ec, stoker::JobReport report) {
    if (ec) {
      std::fprintf(stderr, "example_producer: job failed: %s\n", report.error.c_str());
      return;
    }
    for (std::size_t p = 0; p < kPartitions; ++p)
      for (std::size_t i = 0; i < kBytes; ++i)
        if (out[p][i] != ~witness(p, i)) {
          std::fprintf(stderr, "example_producer: partition %zu byte %zu is wrong\n", p, i);
          return;
        }
    std::printf("%s\n", stoker::engine::summarize(report).c_str());
    status = 0;
  });
  io.run();
  // Everything the job held is back: no budget, pool block or slot in use.
  const auto stats = engine.stats();
  if (stats.host_budget_in_use != 0 || stats.busy_slots != 0) {
    std::fprintf(stderr, "example_producer: the engine still holds %zu bytes and %zu slots\n",
                 stats.host_budget_in_use, stats.busy_slots);
    return 1;
  }
  return status;
}
