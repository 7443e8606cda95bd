// Two streams forked from a caller's stream and joined back into it, for
// work whose parts run side by side: one at the device's greatest priority,
// whose blocks the SMs take first, one at its least, whose blocks fill
// what the first leaves free. The streams and events belong to the calling
// thread and the current device and are made once, then reused: a sparse
// MSM forks four or five times per proof.
#pragma once

#include <cuda_runtime.h>

#include <system_error>

namespace stoker::kernels::gpu::detail {

class ForkedStreams {
 public:
  // After construction, work enqueued on high() and low() follows the work
  // enqueued on `caller` so far; error() says whether the fork was made.
  explicit ForkedStreams(cudaStream_t caller);
  // Joins unless join() did: whatever went wrong between, the caller's
  // later work (a scratch freed or reused) waits for both streams.
  ~ForkedStreams();
  ForkedStreams(const ForkedStreams&) = delete;
  ForkedStreams& operator=(const ForkedStreams&) = delete;

  std::error_code error() const { return error_; }
  cudaStream_t high() const { return high_; }
  cudaStream_t low() const { return low_; }

  // Work enqueued on low() from now on follows the work enqueued on high()
  // so far.
  std::error_code low_follows_high();

  // Work enqueued on `caller` from now on follows the work on both streams.
  std::error_code join();

 private:
  cudaStream_t caller_;
  cudaStream_t high_ = nullptr;
  cudaStream_t low_ = nullptr;
  cudaEvent_t joined_[2] = {};
  cudaEvent_t step_ = nullptr;
  bool forked_ = false;
  std::error_code error_;
};

}  // namespace stoker::kernels::gpu::detail
