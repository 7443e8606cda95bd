// CpuSet: reading sysfs cpulists, and binding threads near a device.
#include "devices/cpu_set.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "devices/device_set.hpp"

namespace stoker::devices {
namespace {

TEST(CpuSet, ReadsCpulistsAsSysfsWritesThem) {
  const auto s = CpuSet::parse("0-3,8,10-11\n");
  ASSERT_TRUE(s) << s.error().what();
  EXPECT_EQ(s->cpus(), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(s->to_string(), "0-3,8,10-11");
  // Repeats and overlaps collapse; the printed form joins runs.
  EXPECT_EQ(CpuSet::parse("5,4,3-4,6")->to_string(), "3-6");
  EXPECT_EQ(CpuSet::parse("7")->cpus(), std::vector<int>{7});
}

TEST(CpuSet, MalformedCpulistsAreRefusedNamingTheText) {
  for (const char* bad :
       {"", "\n", "a", "3-1", "1,", ",1", "-2", "1-", "1-2-3", "1 2", "99999999"}) {
    const auto s = CpuSet::parse(bad);
    ASSERT_FALSE(s) << "'" << bad << "' was read as " << s->to_string();
    EXPECT_EQ(s.error().code, make_error_code(Errc::invalid_argument));
    EXPECT_NE(s.error().what().find("cpulist '"), std::string::npos) << s.error().what();
  }
  EXPECT_NE(CpuSet::parse("3-1").error().what().find("range 3-1 runs backwards"),
            std::string::npos);
}

TEST(CpuSet, IntersectsAndContains) {
  const CpuSet a({0, 1, 2, 3}), b({2, 3, 4});
  EXPECT_EQ(a.intersect(b), CpuSet({2, 3}));
  EXPECT_TRUE(a.contains(CpuSet({1, 3})));
  EXPECT_FALSE(a.contains(b));
  EXPECT_TRUE(a.intersect(CpuSet({9})).empty());
}

TEST(CpuSet, BindsOnlyTheCallingThread) {
  const CpuSet allowed = CpuSet::allowed();
  ASSERT_FALSE(allowed.empty()) << "sched_getaffinity gave no CPU";
  if (allowed.size() < 2) GTEST_SKIP() << "one CPU allowed: binding could not be told apart";
  const CpuSet one({allowed.cpus().back()});
  CpuSet seen;
  std::thread([&] {
    ASSERT_FALSE(one.bind_this_thread());
    seen = CpuSet::allowed();
  }).join();
  EXPECT_EQ(seen, one);
  EXPECT_EQ(CpuSet::allowed(), allowed);
  EXPECT_EQ(CpuSet{}.bind_this_thread(), make_error_code(Errc::invalid_argument))
      << "a thread bound to no CPU could not run";
}

// A device's threads are bound only where that moves them somewhere: to
// local CPUs this thread may use, not all of those it may use.
TEST(CpuSet, CpusNearADeviceAreItsAllowedLocalOnesWhereThatNarrowsAnything) {
  const CpuSet allowed = CpuSet::allowed();
  ASSERT_FALSE(allowed.empty());
  DeviceInfo info;
  EXPECT_TRUE(cpus_near(info).empty()) << "unknown local CPUs";
  info.cpu_affinity = "not a list";
  EXPECT_TRUE(cpus_near(info).empty());
  info.cpu_affinity = allowed.to_string();
  EXPECT_TRUE(cpus_near(info).empty()) << "every allowed CPU is local: nothing to narrow";
  info.cpu_affinity = std::to_string(allowed.cpus().back() + 1);
  EXPECT_TRUE(cpus_near(info).empty()) << "no local CPU is allowed here";
  if (allowed.size() >= 2) {
    const CpuSet first({allowed.cpus()[0]});
    info.cpu_affinity = first.to_string() + "," + std::to_string(allowed.cpus().back() + 1);
    EXPECT_EQ(cpus_near(info), first);
  }
}

TEST(CpuSet, HostBackendDevicesCarryTheirCpulistsAndRefuseBadOnes) {
  DiscoverOptions o;
  o.backend = BackendChoice::host;
  o.host.device_count = 2;
  o.host.cpu_affinity = {"0-1"};
  auto set = discover(o);
  ASSERT_TRUE(set) << set.error().what();
  EXPECT_EQ((*set)[0].info().cpu_affinity, "0-1");
  EXPECT_EQ((*set)[1].info().cpu_affinity, "");
  o.host.cpu_affinity = {"0", "2-1"};
  set = discover(o);
  ASSERT_FALSE(set);
  EXPECT_NE(set.error().what().find("host device 1: cpulist '2-1'"), std::string::npos)
      << set.error().what();
  o.host.cpu_affinity = {"0", "1", "2"};
  set = discover(o);
  ASSERT_FALSE(set);
  EXPECT_NE(set.error().what().find("3 CPU lists given for 2 host devices"), std::string::npos)
      << set.error().what();
}

}  // namespace
}  // namespace stoker::devices
