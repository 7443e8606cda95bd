// A minimal owning device array for the GPU kernels suites.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "kernels/field.cuh"

namespace stoker::kernels::test {

class DeviceVec {
 public:
  explicit DeviceVec(std::size_t n) : n_(n) {
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&p_), n * sizeof(Fr)), cudaSuccess);
  }
  explicit DeviceVec(const std::vector<Fr>& h) : DeviceVec(h.size()) { upload(h); }
  ~DeviceVec() { cudaFree(p_); }
  DeviceVec(const DeviceVec&) = delete;
  DeviceVec& operator=(const DeviceVec&) = delete;

  Fr* get() const { return p_; }
  void upload(const std::vector<Fr>& h) {
    EXPECT_EQ(cudaMemcpy(p_, h.data(), h.size() * sizeof(Fr), cudaMemcpyHostToDevice), cudaSuccess);
  }
  std::vector<Fr> download() const {
    std::vector<Fr> h(n_);
    EXPECT_EQ(cudaMemcpy(h.data(), p_, n_ * sizeof(Fr), cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
  }

 private:
  Fr* p_ = nullptr;
  std::size_t n_;
};

}  // namespace stoker::kernels::test
