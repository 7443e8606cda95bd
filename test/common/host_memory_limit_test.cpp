#include "common/host_memory_limit.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <string>

#include "common/bytes_str.hpp"

namespace stoker::common {
namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Lowers one soft limit for the test's span and puts it back: a process may
// raise its soft limit again up to the hard one.
class SoftLimit {
 public:
  SoftLimit(int resource, rlim_t bytes) : resource_(resource) {
    getrlimit(resource_, &saved_);
    rlimit lowered = saved_;
    lowered.rlim_cur = bytes;
    set_ = setrlimit(resource_, &lowered) == 0;
  }
  ~SoftLimit() { setrlimit(resource_, &saved_); }
  bool set() const { return set_; }

 private:
  int resource_;
  rlimit saved_{};
  bool set_ = false;
};

std::size_t physical() {
  return static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) *
         static_cast<std::size_t>(sysconf(_SC_PAGE_SIZE));
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitizer = true;
#else
constexpr bool kSanitizer = false;
#endif

TEST(HostMemoryLimit, WithoutLimitsIsTheMachinesMemory) {
  rlimit as{}, data{};
  getrlimit(RLIMIT_AS, &as);
  getrlimit(RLIMIT_DATA, &data);
  if (as.rlim_cur != RLIM_INFINITY || data.rlim_cur != RLIM_INFINITY)
    GTEST_SKIP() << "this process runs under a memory limit";
  const auto l = HostMemoryLimit::current();
  EXPECT_EQ(l.source, HostMemoryLimit::Source::physical);
  EXPECT_EQ(l.bytes, physical());
  EXPECT_EQ(l.describe(), "this machine has " + bytes_with_units(physical()) + " of memory");
}

// The smaller of the two limits, named by its ulimit option; a need above
// it is refused in words, one at it is not.
TEST(HostMemoryLimit, NamesTheSmallestLimitAndChecksANeedAgainstIt) {
  if (kSanitizer) GTEST_SKIP() << "sanitizers reserve more address space than any limit";
  const std::size_t as_bytes = physical() / 2, data_bytes = physical() / 2 - 4096;
  {
    SoftLimit as(RLIMIT_AS, as_bytes);
    ASSERT_TRUE(as.set());
    const auto l = HostMemoryLimit::current();
    EXPECT_EQ(l.source, HostMemoryLimit::Source::address_space);
    EXPECT_EQ(l.bytes, as_bytes);
    EXPECT_EQ(l.describe(), "the address-space limit (ulimit -v) is " + bytes_with_units(as_bytes));
    EXPECT_FALSE(check_host_memory("h", as_bytes));
    const Error e = check_host_memory("the NTT of 2^40 elements", as_bytes + 1);
    EXPECT_EQ(e.code, make_error_code(Errc::out_of_host_memory));
    EXPECT_EQ(e.what(), "the NTT of 2^40 elements needs " + bytes_with_units(as_bytes + 1) +
                            " of host memory; the address-space limit (ulimit -v) is " +
                            bytes_with_units(as_bytes));
    SoftLimit data(RLIMIT_DATA, data_bytes);
    ASSERT_TRUE(data.set());
    EXPECT_EQ(HostMemoryLimit::current().describe(),
              "the data-segment limit (ulimit -d) is " + bytes_with_units(data_bytes));
  }
  EXPECT_NE(HostMemoryLimit::current().source, HostMemoryLimit::Source::address_space);
}

// A refusal says what was asked for, that the system refused it (the
// phrase `stoker stress` tells such failures by) and how much of the limit
// the process already takes.
TEST(HostMemoryLimit, ARefusalNamesTheSizeTheLimitAndWhatIsInUse) {
  if (kSanitizer) GTEST_SKIP() << "sanitizers reserve more address space than any limit";
  SoftLimit as(RLIMIT_AS, physical() / 2);
  ASSERT_TRUE(as.set());
  const Error e = host_memory_refused("the toy SRS of 2^28 - 1 points", 25769803680);
  EXPECT_EQ(e.code, make_error_code(Errc::out_of_host_memory));
  EXPECT_TRUE(has(e.what(),
                  "the toy SRS of 2^28 - 1 points: the system refused 25769803680 bytes "
                  "(24.0 GiB) of host memory; the address-space limit (ulimit -v) is "))
      << e.what();
  EXPECT_TRUE(has(e.what(), std::string(kRefusedBySystem))) << e.what();
  EXPECT_TRUE(has(e.what(), " of it in use")) << e.what();
}

}  // namespace
}  // namespace stoker::common
