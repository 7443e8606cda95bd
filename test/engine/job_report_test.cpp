// What a JobReport says about a finished job, from its partitions' spans.
#include "engine/job_report.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

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

// The Chrome trace is JSON a viewer can load whatever the names hold:
// quotes, backslashes, control characters and bytes that are not UTF-8 in a
// job's or a device's name are escaped (or replaced), and every span is an
// event with its times in microseconds.
TEST(JobReport, ChromeTraceIsValidJsonWhateverTheNamesHold) {
  JobReport r;
  r.name = "job \"one\"\\\n\t\x01 \xff";
  r.wall_ms = 10;
  r.device_names = {"GPU \"0\""};
  r.parts = {part(0, 1.5, 2.25, 4096)};
  r.parts[0].kernels = {4, 3};
  std::ostringstream out;
  write_chrome_trace(out, {r});
  nlohmann::json trace;
  ASSERT_NO_THROW(trace = nlohmann::json::parse(out.str())) << out.str();
  const auto& events = trace.at("traceEvents");
  std::vector<nlohmann::json> spans;
  for (const auto& e : events)
    if (e.at("ph") == "X") spans.push_back(e);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_DOUBLE_EQ(spans[0].at("ts").get<double>(), 1500.0);
  EXPECT_DOUBLE_EQ(spans[0].at("dur").get<double>(), 2250.0);
  EXPECT_EQ(spans[0].at("args").at("bytes_in").get<std::size_t>(), 4096u);
  EXPECT_EQ(spans[0].at("name").get<std::string>().rfind("job \"one\"\\\n\t\x01 ", 0), 0u);
  EXPECT_EQ(events[0].at("args").at("name").get<std::string>(), "device 0 (GPU \"0\")");
}

}  // namespace
}  // namespace stoker::engine
