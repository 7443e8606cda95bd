#include "common/error.hpp"

#include <gtest/gtest.h>

#include <string>

namespace stoker::common {
namespace {

// cudaErrorMemoryAllocation and cudaErrorInvalidValue, as the runtime
// numbers them; the texts are lookups that need no driver or GPU.
constexpr int kCudaOutOfMemory = 2;
constexpr int kCudaInvalidValue = 1;

TEST(CudaMessage, NamesWhatFailedTheErrorAndItsDescription) {
  EXPECT_EQ(cuda_message("cudaMalloc of 4096 bytes", kCudaOutOfMemory),
            "cudaMalloc of 4096 bytes: cudaErrorMemoryAllocation: out of memory");
}

TEST(CudaMessage, MatchesTheCudaCategorysMessage) {
  const std::error_code ec = make_cuda_error(kCudaInvalidValue);
  EXPECT_EQ(ec.category().name(), std::string("cuda"));
  EXPECT_EQ(cuda_message("copy", kCudaInvalidValue), "copy: " + ec.message());
}

TEST(CudaError, SuccessIsNoError) {
  EXPECT_FALSE(make_cuda_error(0));
}

// Users and every layer write the codes as stoker::Errc; a code made through
// that name is the stoker category's and equals the one made here.
TEST(StokerErrc, IsTheSameCodeThroughTheStokerName) {
  const std::error_code ec = stoker::Errc::verification_failed;
  EXPECT_EQ(ec, Errc::verification_failed);
  EXPECT_EQ(ec.category().name(), std::string("stoker"));
  EXPECT_EQ(ec.message(), "verification failed");
}

}  // namespace
}  // namespace stoker::common
