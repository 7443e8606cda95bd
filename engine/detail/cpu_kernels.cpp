#include "engine/detail/cpu_kernels.hpp"

#include <utility>

#include "engine/detail/guarded_call.hpp"
#include "engine/detail/nvtx.hpp"

namespace stoker::engine::detail {

std::error_code enqueue_cpu_kernels(devices::Device& device, devices::Stream& stream,
                                    KernelBuffers buffers, KernelFn cpu, std::size_t index,
                                    std::shared_ptr<std::string> thrown,
                                    std::shared_ptr<std::vector<Clock::time_point>> marks) {
  // Runs on the stream's worker, in stream order, after this frame is gone:
  // everything it reads is held by the task.
  auto task = [&dev = device, &st = stream, b = std::move(buffers), fn = std::move(cpu),
               thrown = std::move(thrown), marks = std::move(marks), index]() {
    const nvtx::ScopedRange running(nvtx::Stage::kernels, index);
    KernelContext c = b.context(dev, st);
    // The task's own clock readings: its start, each mark, its end (the
    // stream's events are read on another clock's footing).
    marks->push_back(Clock::now());
    c.mark = [marks]() -> std::error_code {
      if (marks->size() > kMaxKernelMarks) return make_error_code(Errc::invalid_argument);
      marks->push_back(Clock::now());
      return {};
    };
    struct End {
      std::vector<Clock::time_point>& m;
      ~End() {
        if (m.size() > 1) m.push_back(Clock::now());
      }
    } end{*marks};
    return guarded_call(*thrown, fn, c);
  };
  return stream.enqueue_host(std::move(task));
}

}  // namespace stoker::engine::detail
