// Submits a job of four partitions from ordinary (pageable) vectors and
// takes its completion in a callback. The engine stages the inputs through
// pinned memory, so the vectors are never handed to the DMA engine.
//
//   build/examples/example_callback     (STOKER_BACKEND=host to run without a GPU)
#include <boost/asio/io_context.hpp>
#include <cstdio>
#include <vector>

#include "engine/engine.hpp"
#include "examples/invert_bytes.hpp"

int main() {
  auto config = stoker::Config::from_env();
  if (!config) {
    std::fprintf(stderr, "example_callback: %s\n", config.error().what().c_str());
    return 2;
  }
  boost::asio::io_context io;
  stoker::Engine engine(io.get_executor(), config.value());

  constexpr std::size_t kPartitions = 4, kBytes = std::size_t{1} << 20;
  // Inputs and outputs stay owned by us and must outlive the job's handler.
  std::vector<std::vector<std::byte>> in(kPartitions), out(kPartitions);
  stoker::Job job;
  job.name = "invert";
  for (std::size_t p = 0; p < kPartitions; ++p) {
    in[p].resize(kBytes);
    for (std::size_t i = 0; i < kBytes; ++i) in[p][i] = std::byte(i * 7 + p);
    out[p].resize(kBytes);
    stoker::Partition part;
    part.inputs.push_back(stoker::Input::pageable(in[p]));
    part.work = stoker::examples::invert_bytes();
    part.outputs.push_back(stoker::Output::to(out[p]));
    job.partitions.push_back(std::move(part));
  }

  int status = 1;
  engine.async_submit(std::move(job), [&](std::error_code ec, stoker::JobReport report) {
    if (ec) {
      std::fprintf(stderr, "example_callback: job failed: %s\n", report.error.c_str());
      return;
    }
    for (std::size_t p = 0; p < kPartitions; ++p)
      for (std::size_t i = 0; i < kBytes; ++i)
        if (out[p][i] != ~in[p][i]) {
          std::fprintf(stderr, "example_callback: partition %zu byte %zu is wrong\n", p, i);
          return;
        }
    std::printf("%s\n", stoker::engine::summarize(report).c_str());
    status = 0;
  });
  io.run();  // returns once the handler has run: the engine keeps the loop busy until then
  return status;
}
