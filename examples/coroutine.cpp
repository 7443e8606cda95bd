// The same kind of job awaited from a C++20 coroutine with
// boost::asio::use_awaitable: a failed job throws stoker::JobError (its
// what() is the report's message, its report() the report), a finished one
// returns its JobReport. Two jobs run one after the other;
// the second reuses the pinned blocks the first gave back.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstdio>
#include <exception>
#include <vector>

#include "engine/engine.hpp"
#include "examples/invert_bytes.hpp"

namespace asio = boost::asio;

asio::awaitable<int> run_two_jobs(stoker::Engine& engine) {
  constexpr std::size_t kBytes = std::size_t{3} << 20;
  std::vector<std::byte> data(kBytes), once(kBytes), twice(kBytes);
  for (std::size_t i = 0; i < kBytes; ++i) data[i] = std::byte(i % 251);

  const auto one_partition = [](std::span<const std::byte> from, std::span<std::byte> to) {
    stoker::Job job;
    stoker::Partition part;
    part.inputs.push_back(stoker::Input::pageable(from));
    part.work = stoker::examples::invert_bytes();
    part.outputs.push_back(stoker::Output::to(to));
    job.partitions.push_back(std::move(part));
    return job;
  };
  const stoker::JobReport first =
      co_await engine.async_submit(one_partition(data, once), asio::use_awaitable);
  const stoker::JobReport second =
      co_await engine.async_submit(one_partition(once, twice), asio::use_awaitable);
  if (twice != data) {
    std::fprintf(stderr, "example_coroutine: inverting twice did not give the input back\n");
    co_return 1;
  }
  std::printf("%s\n%s\n", stoker::engine::summarize(first).c_str(),
              stoker::engine::summarize(second).c_str());
  co_return 0;
}

int main() {
  auto config = stoker::Config::from_env();
  if (!config) {
    std::fprintf(stderr, "example_coroutine: %s\n", config.error().what().c_str());
    return 2;
  }
  asio::io_context io;
  stoker::Engine engine(io.get_executor(), config.value());
  int status = 1;
  asio::co_spawn(io, run_two_jobs(engine), [&](std::exception_ptr e, int result) {
    if (e) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& x) {
        std::fprintf(stderr, "example_coroutine: %s\n", x.what());
      }
      return;
    }
    status = result;
  });
  io.run();
  return status;
}
