// What a JobReport says about a finished job, from its partitions' spans.
#include "engine/job_report.hpp"

#include <gtest/gtest.h>

namespace stoker::engine {
namespace {

PartitionReport part(int device, double h2d_start, double h2d_ms, std::size_t bytes_in) {
  PartitionReport p;
  p.device = device;
  p.h2d = {h2d_start, h2d_ms};
  p.bytes_in = bytes_in;
  return p;
}

// Staged partitions' H2D spans overlap on the one H2D stream: the busy time
// is their union, per device, never their sum, and the rate while busy is
// the device's bytes over it.
TEST(JobReport, H2dBusyIsTheUnionOfEachDevicesSpans) {
  JobReport r;
  r.wall_ms = 100;
  r.device_busy = {0.1, 0.2};
  r.device_names = {"a", "b"};
  r.parts = {part(0, 0, 10, 400'000'000),
             part(0, 5, 10, 400'000'000),   // 0-15
             part(0, 12, 2, 0),             // inside
             part(0, 30, 10, 200'000'000),  // 30-40
             part(1, 0, 50, 500'000'000),
             part(-1, 0, 90, 1)};  // never ran
  EXPECT_DOUBLE_EQ(r.h2d_busy_ms(0), 25.0);
  EXPECT_DOUBLE_EQ(r.h2d_busy_ms(1), 50.0);
  EXPECT_DOUBLE_EQ(r.h2d_busy_ms(2), 0.0);
  EXPECT_EQ(r.bytes_in_on(0), 1'000'000'000u);
  const auto s = summarize(r);
  EXPECT_NE(s.find("device 0 (a): compute busy 10 %, H2D busy 25 % (40.0 GB/s while busy)"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("device 1 (b): compute busy 20 %, H2D busy 50 % (10.0 GB/s while busy)"),
            std::string::npos)
      << s;
}

}  // namespace
}  // namespace stoker::engine
