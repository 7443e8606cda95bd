// DeviceSlots on the host backend: a slot and its device bytes are held by
// a SlotLease and come back when it is destroyed, moved from or released,
// and a faulted device offers no slot again.
#include "engine/detail/device_slots.hpp"

#include <gtest/gtest.h>

#include <utility>

namespace stoker::engine::detail {
namespace {

struct Devices {
  explicit Devices(int count) {
    Config c;
    c.devices.backend = devices::BackendChoice::host;
    c.devices.host.device_count = count;
    c.pipeline_depth = 2;
    auto s = devices::discover(c.devices);
    EXPECT_TRUE(static_cast<bool>(s));
    set = std::move(*s);
    config = c.resolved(set.backend(), set.size());
    auto made = DeviceSlots::create(set, config);
    EXPECT_TRUE(static_cast<bool>(made));
    slots = std::move(*made);
  }
  Config config;
  devices::DeviceSet set;
  std::unique_ptr<DeviceSlots> slots;
};

TEST(DeviceSlots, ALeaseHoldsItsSlotAndBytesUntilItIsDestroyed) {
  Devices d(1);
  auto& slots = *d.slots;
  const std::size_t capacity = slots.capacity(0);
  ASSERT_EQ(slots.free_slots(0), 2u);
  {
    auto a = slots.take(0, capacity / 2);
    EXPECT_EQ(a.device(), 0u);
    EXPECT_EQ(slots.free_slots(0), 1u);
    EXPECT_TRUE(slots.fits_now(0, capacity / 2));
    EXPECT_FALSE(slots.fits_now(0, capacity / 2 + 1));
    auto b = slots.take(0, capacity / 2);
    EXPECT_NE(a.slot(), b.slot());
    EXPECT_EQ(slots.free_slots(0), 0u);
    EXPECT_FALSE(slots.fits_now(0, 1));
  }
  EXPECT_EQ(slots.free_slots(0), 2u);
  EXPECT_TRUE(slots.fits_now(0, capacity));
  EngineStats s;
  slots.add_stats(s);
  EXPECT_EQ(s.busy_slots, 0u);
  EXPECT_EQ(s.device_budget_in_use.at(0), 0u);
}

TEST(DeviceSlots, AMovedLeaseGivesBackOnceAndReleaseIsFinal) {
  Devices d(1);
  auto& slots = *d.slots;
  auto a = slots.take(0, 1000);
  SlotLease b = std::move(a);
  EXPECT_FALSE(a);
  EXPECT_TRUE(b);
  EXPECT_EQ(slots.free_slots(0), 1u);
  SlotLease c;
  c = std::move(b);
  EXPECT_EQ(slots.free_slots(0), 1u);
  c.release();
  EXPECT_FALSE(c);
  EXPECT_EQ(slots.free_slots(0), 2u);
  c.release();  // nothing left to give back
  EXPECT_EQ(slots.free_slots(0), 2u);
  EngineStats s;
  slots.add_stats(s);
  EXPECT_EQ(s.device_budget_in_use.at(0), 0u);
}

TEST(DeviceSlots, AFaultedDeviceOffersNoSlotAndIsLeftOutOfTheOrder) {
  Devices d(2);
  auto& slots = *d.slots;
  auto lease = slots.take(1, 10);
  EXPECT_EQ(slots.by_free_slots(), (std::vector<std::size_t>{0, 1}));
  slots.faulted(0);
  EXPECT_TRUE(slots.any_faulted());
  EXPECT_EQ(slots.free_slots(0), 0u);
  EXPECT_EQ(slots.by_free_slots(), (std::vector<std::size_t>{1}));
  EXPECT_NE(slots.reserve_resident(1, "points").code, std::error_code{});
}

TEST(DeviceSlots, ResidentBytesComeOffEveryDevicesCapacityUntilReleased) {
  Devices d(2);
  auto& slots = *d.slots;
  const std::size_t c0 = slots.capacity(0), c1 = slots.capacity(1);
  EXPECT_FALSE(slots.reserve_resident(4096, "points"));
  EXPECT_EQ(slots.capacity(0), c0 - 4096);
  EXPECT_EQ(slots.capacity(1), c1 - 4096);
  const auto too_much = slots.reserve_resident(c0, "SRS 'big'");
  EXPECT_EQ(too_much.code, make_error_code(Errc::out_of_device_memory));
  EXPECT_NE(too_much.what().find("SRS 'big' needs"), std::string::npos) << too_much.what();
  slots.release_resident(4096, /*resize_pools=*/true);
  EXPECT_EQ(slots.capacity(0), c0);
  EXPECT_EQ(slots.capacity(1), c1);
}

}  // namespace
}  // namespace stoker::engine::detail
