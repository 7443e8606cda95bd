#include "kernels/detail/forked_streams.hpp"

#include <vector>

#include "common/error.hpp"

namespace stoker::kernels::gpu::detail {
namespace {

struct ThreadStreams {
  int device = -1;
  cudaStream_t high = nullptr;
  cudaStream_t low = nullptr;
  cudaEvent_t fork = nullptr;
  cudaEvent_t step = nullptr;
  cudaEvent_t joined[2] = {};
};

void destroy(const ThreadStreams& t) {
  for (cudaEvent_t e : {t.fork, t.step, t.joined[0], t.joined[1]})
    if (e) (void)cudaEventDestroy(e);
  for (cudaStream_t s : {t.high, t.low})
    if (s) (void)cudaStreamDestroy(s);
}

// One set per device the thread has used, destroyed when the thread ends
// (errors ignored: at process exit the runtime may already be gone). A set
// that could not be made is not kept: the next call tries again.
class ThreadCache {
 public:
  ~ThreadCache() {
    for (const ThreadStreams& t : sets_) destroy(t);
  }
  cudaError_t on(int device, const ThreadStreams*& out) {
    for (const ThreadStreams& t : sets_)
      if (t.device == device) return out = &t, cudaSuccess;
    ThreadStreams t;
    t.device = device;
    int least = 0, greatest = 0;  // numerically the greatest priority is the lowest number
    cudaError_t e = cudaDeviceGetStreamPriorityRange(&least, &greatest);
    if (!e) e = cudaStreamCreateWithPriority(&t.high, cudaStreamNonBlocking, greatest);
    if (!e) e = cudaStreamCreateWithPriority(&t.low, cudaStreamNonBlocking, least);
    for (cudaEvent_t* ev : {&t.fork, &t.step, &t.joined[0], &t.joined[1]})
      if (!e) e = cudaEventCreateWithFlags(ev, cudaEventDisableTiming);
    if (e) {
      destroy(t);
      return e;
    }
    sets_.push_back(t);
    out = &sets_.back();
    return cudaSuccess;
  }

 private:
  std::vector<ThreadStreams> sets_;
};

}  // namespace

ForkedStreams::ForkedStreams(cudaStream_t caller) : caller_(caller) {
  thread_local ThreadCache cache;
  int device = 0;
  if ((error_ = make_cuda_error(cudaGetDevice(&device)))) return;
  const ThreadStreams* found = nullptr;
  if ((error_ = make_cuda_error(cache.on(device, found)))) return;
  const ThreadStreams& t = *found;
  if ((error_ = make_cuda_error(cudaEventRecord(t.fork, caller)))) return;
  for (cudaStream_t s : {t.high, t.low})
    if ((error_ = make_cuda_error(cudaStreamWaitEvent(s, t.fork, 0)))) return;
  high_ = t.high;
  low_ = t.low;
  joined_[0] = t.joined[0];
  joined_[1] = t.joined[1];
  step_ = t.step;
  forked_ = true;
}

ForkedStreams::~ForkedStreams() { (void)join(); }

std::error_code ForkedStreams::low_follows_high() {
  if (!forked_) return make_error_code(Errc::invalid_argument);
  if (auto ec = make_cuda_error(cudaEventRecord(step_, high_))) return ec;
  return make_cuda_error(cudaStreamWaitEvent(low_, step_, 0));
}

std::error_code ForkedStreams::join() {
  if (!forked_) return {};
  forked_ = false;
  std::error_code first;
  const cudaStream_t streams[2] = {high_, low_};
  for (int i = 0; i < 2; ++i) {
    std::error_code ec = make_cuda_error(cudaEventRecord(joined_[i], streams[i]));
    if (!ec) ec = make_cuda_error(cudaStreamWaitEvent(caller_, joined_[i], 0));
    if (ec && !first) first = ec;
  }
  return first;
}

}  // namespace stoker::kernels::gpu::detail
