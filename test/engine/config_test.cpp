#include "engine/config.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace stoker::engine {
namespace {

TEST(Config, ArgumentsOverrideDefaultsAndLeaveTheRest) {
  std::vector<std::string> args = {
      "--backend",  "host",  "--host-devices=3", "--depth", "4",
      "--slowdown", "1,2.5", "--chunk-mib",      "2",       "--verify"};
  auto c = Config{}.apply_args(args);
  ASSERT_TRUE(c) << c.error().what();
  EXPECT_EQ(c->devices.backend, devices::BackendChoice::host);
  EXPECT_EQ(c->devices.host.device_count, 3);
  EXPECT_EQ(c->pipeline_depth, 4);
  EXPECT_EQ(c->devices.host.slowdown, (std::vector<double>{1.0, 2.5}));
  EXPECT_EQ(c->staging_chunk_bytes, std::size_t{2} << 20);
  EXPECT_EQ(args, (std::vector<std::string>{"--verify"}));
}

TEST(Config, StagingChunksCanBeGivenInKibForSizesBelowAMib) {
  std::vector<std::string> args = {"--chunk-kib", "512"};
  auto c = Config{}.apply_args(args);
  ASSERT_TRUE(c) << c.error().what();
  EXPECT_EQ(c->staging_chunk_bytes, std::size_t{512} << 10);
  std::vector<std::string> tiny = {"--chunk-kib", "16"};
  auto t = Config{}.apply_args(tiny);
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().what().find("--chunk-kib: '16' is not an integer in 64..1048576"),
            std::string::npos)
      << t.error().what();
  setenv("STOKER_CHUNK_KIB", "256", 1);
  auto e = Config::from_env();
  unsetenv("STOKER_CHUNK_KIB");
  ASSERT_TRUE(e) << e.error().what();
  EXPECT_EQ(e->staging_chunk_bytes, std::size_t{256} << 10);
}

TEST(Config, StagingRingIsASettingWithABound) {
  std::vector<std::string> args = {"--staging-ring-mib", "64"};
  auto c = Config{}.apply_args(args);
  ASSERT_TRUE(c) << c.error().what();
  EXPECT_EQ(c->staging_ring_bytes, std::size_t{64} << 20);
  EXPECT_FALSE(c->validate());
  Config big = *c;
  big.staging_ring_bytes = std::size_t{17} << 30;
  const auto e = big.validate();
  ASSERT_TRUE(e);
  EXPECT_NE(e.what().find("staging ring"), std::string::npos) << e.what();
}

TEST(Config, BadValuesNameTheSettingAndValue) {
  std::vector<std::string> a1 = {"--depth", "1"};
  auto c1 = Config{}.apply_args(a1);
  ASSERT_FALSE(c1);
  EXPECT_NE(c1.error().what().find("--depth: '1' is not an integer in 2..16"), std::string::npos)
      << c1.error().what();
  std::vector<std::string> a2 = {"--backend", "tpu"};
  auto c2 = Config{}.apply_args(a2);
  ASSERT_FALSE(c2);
  EXPECT_NE(c2.error().what().find("tpu"), std::string::npos);
  std::vector<std::string> a3 = {"--workers", "many"};
  auto c3 = Config{}.apply_args(a3);
  ASSERT_FALSE(c3);
  EXPECT_NE(c3.error().what().find("many"), std::string::npos);
  std::vector<std::string> a4 = {"--depth"};
  EXPECT_FALSE(Config{}.apply_args(a4));
}

TEST(Config, StreamPrioritiesAndStagingThreadsAreSettings) {
  std::vector<std::string> args = {"--copy-priority", "low", "--compute-priority=high",
                                   "--staging-threads", "6"};
  auto c = Config{}.apply_args(args);
  ASSERT_TRUE(c) << c.error().what();
  EXPECT_EQ(c->copy_priority, devices::StreamPriority::low);
  EXPECT_EQ(c->compute_priority, devices::StreamPriority::high);
  EXPECT_EQ(c->staging_threads, 6);
  EXPECT_TRUE(args.empty());
  std::vector<std::string> bad = {"--compute-priority", "urgent"};
  auto b = Config{}.apply_args(bad);
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().what().find("--compute-priority: 'urgent'"), std::string::npos)
      << b.error().what();
  setenv("STOKER_COPY_PRIORITY", "normal", 1);
  auto e = Config::from_env();
  unsetenv("STOKER_COPY_PRIORITY");
  ASSERT_TRUE(e) << e.error().what();
  EXPECT_EQ(e->copy_priority, devices::StreamPriority::normal);
}

TEST(Config, EarlyUploadIsASetting) {
  EXPECT_TRUE(Config{}.early_upload);
  std::vector<std::string> args = {"--early-upload", "off", "--depth", "4"};
  auto c = Config{}.apply_args(args);
  ASSERT_TRUE(c) << c.error().what();
  EXPECT_FALSE(c->early_upload);
  EXPECT_EQ(c->pipeline_depth, 4);
  std::vector<std::string> bad = {"--early-upload=maybe"};
  auto b = Config{}.apply_args(bad);
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().what().find("--early-upload: 'maybe' is not on or off"), std::string::npos)
      << b.error().what();
  setenv("STOKER_EARLY_UPLOAD", "off", 1);
  auto e = Config::from_env();
  unsetenv("STOKER_EARLY_UPLOAD");
  ASSERT_TRUE(e) << e.error().what();
  EXPECT_FALSE(e->early_upload);
}

TEST(Config, PageableInputsIsASetting) {
  EXPECT_EQ(Config{}.pageable_inputs, PageableInputs::stage);
  std::vector<std::string> args = {"--pageable-inputs", "register"};
  auto c = Config{}.apply_args(args);
  ASSERT_TRUE(c) << c.error().what();
  EXPECT_EQ(c->pageable_inputs, PageableInputs::register_in_place);
  std::vector<std::string> bad = {"--pageable-inputs=pin"};
  auto b = Config{}.apply_args(bad);
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().what().find("--pageable-inputs: 'pin' is not stage or register"),
            std::string::npos)
      << b.error().what();
  setenv("STOKER_PAGEABLE_INPUTS", "register", 1);
  auto e = Config::from_env();
  unsetenv("STOKER_PAGEABLE_INPUTS");
  ASSERT_TRUE(e) << e.error().what();
  EXPECT_EQ(e->pageable_inputs, PageableInputs::register_in_place);
}

TEST(Config, EnvironmentIsRead) {
  setenv("STOKER_PIPELINE_DEPTH", "5", 1);
  setenv("STOKER_BACKEND", "host", 1);
  auto c = Config::from_env();
  unsetenv("STOKER_PIPELINE_DEPTH");
  unsetenv("STOKER_BACKEND");
  ASSERT_TRUE(c) << c.error().what();
  EXPECT_EQ(c->pipeline_depth, 5);
  EXPECT_EQ(c->devices.backend, devices::BackendChoice::host);
  setenv("STOKER_PIPELINE_DEPTH", "x", 1);
  auto bad = Config::from_env();
  unsetenv("STOKER_PIPELINE_DEPTH");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().what().find("STOKER_PIPELINE_DEPTH"), std::string::npos);
}

// The documented one-liner, Config::from_env().value(), throws an error
// that names the bad variable and its value, not std::bad_variant_access.
TEST(Config, ValueOfABadEnvironmentThrowsTheNamedError) {
  setenv("STOKER_PIPELINE_DEPTH", "1", 1);
  auto bad = Config::from_env();
  unsetenv("STOKER_PIPELINE_DEPTH");
  try {
    (void)bad.value();
    FAIL() << "value() of an error returned";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code(), make_error_code(Errc::invalid_argument));
    EXPECT_NE(std::string(e.what()).find("STOKER_PIPELINE_DEPTH: '1' is not an integer in 2..16"),
              std::string::npos)
        << e.what();
  }
  setenv("STOKER_WORKERS", "lots", 1);
  auto worse = Config::from_env();
  unsetenv("STOKER_WORKERS");
  EXPECT_THROW((void)*worse, std::system_error);
}

// Values that would wrap when scaled to bytes, or when narrowed to an int,
// are refused with the range allowed, not taken as some other number.
TEST(Config, ValuesThatWouldWrapAreRefused) {
  const std::pair<const char*, const char*> cases[] = {
      {"--host-budget-mib", "17592186044424"},  // 2^44 + 8: wrapped to 8 MiB
      {"--chunk-kib", "18014398509481985"},     // 2^54 + 1
      {"--workers", "4294967298"},              // 2^32 + 2: narrowed to 2
      {"--depth", "4294967299"},
  };
  for (const auto& [flag, value] : cases) {
    std::vector<std::string> args = {flag, value};
    auto c = Config{}.apply_args(args);
    ASSERT_FALSE(c) << flag << " " << value;
    EXPECT_NE(c.error().what().find(std::string(flag) + ": '" + value + "' is not an integer in "),
              std::string::npos)
        << c.error().what();
  }
  std::vector<std::string> ordinal = {"--devices", "0,-1"};
  auto c = Config{}.apply_args(ordinal);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().what().find("'-1' is not a CUDA device ordinal"), std::string::npos)
      << c.error().what();
}

// Every variable's garbage is refused with an error that names the
// variable and the value, not ignored or read as the default: lists with
// empty items, zero counts, values that are no choice of the setting.
TEST(Config, GarbageInAnyVariableIsRefusedNamingIt) {
  const std::pair<const char*, const char*> cases[] = {
      {"STOKER_BACKEND", "gpu"},
      {"STOKER_DEVICES", ",,,"},
      {"STOKER_DEVICES", "0,,1"},
      {"STOKER_DEVICES", ""},
      {"STOKER_DEVICES", "0,0"},
      {"STOKER_HOST_SLOWDOWN", "1,x"},
      {"STOKER_HOST_SLOWDOWN", "0"},
      {"STOKER_HOST_SLOWDOWN", "nan"},
      {"STOKER_HOST_DEVICES", "0"},
      {"STOKER_PIPELINE_DEPTH", " 3"},
      {"STOKER_HOST_BUDGET_MIB", "0"},
      {"STOKER_DEVICE_BUDGET_MIB", "0x10"},
      {"STOKER_CHUNK_MIB", "8M"},
      {"STOKER_CHUNK_KIB", "-64"},
      {"STOKER_WORKERS", "0"},
      {"STOKER_STAGING_THREADS", "1e3"},
      {"STOKER_STAGING_RING_MIB", "0"},
      {"STOKER_PAGEABLE_INPUTS", "pin"},
      {"STOKER_EARLY_UPLOAD", "yes"},
      {"STOKER_BIND_THREADS", "1"},
      {"STOKER_COPY_PRIORITY", "urgent"},
      {"STOKER_COMPUTE_PRIORITY", ""},
      {"STOKER_STAGING_COPY", "garbage"},
  };
  for (const auto& [var, value] : cases) {
    setenv(var, value, 1);
    auto c = Config::from_env();
    unsetenv(var);
    ASSERT_FALSE(c) << var << "=" << value << " was accepted";
    EXPECT_EQ(c.error().what().rfind(std::string(var) + ": '", 0), 0u)
        << var << "=" << value << ": " << c.error().what();
  }
  setenv("STOKER_STAGING_COPY", "memcpy", 1);
  EXPECT_TRUE(Config::from_env());
  unsetenv("STOKER_STAGING_COPY");
}

// A setting given twice, or two that set the same thing, is refused on
// the command line and between variables, not decided by the last one.
TEST(Config, RepeatedAndConflictingSettingsAreRefused) {
  for (std::vector<std::string> args :
       {std::vector<std::string>{"--depth", "3", "--depth=4"},
        std::vector<std::string>{"--chunk-mib", "2", "--chunk-kib", "128"}}) {
    auto c = Config{}.apply_args(args);
    ASSERT_FALSE(c) << args[0];
    EXPECT_TRUE(c.error().what().find("given twice") != std::string::npos ||
                c.error().what().find("both set the staging chunk") != std::string::npos)
        << c.error().what();
  }
  setenv("STOKER_CHUNK_MIB", "2", 1);
  setenv("STOKER_CHUNK_KIB", "128", 1);
  auto e = Config::from_env();
  unsetenv("STOKER_CHUNK_MIB");
  unsetenv("STOKER_CHUNK_KIB");
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().what().find("STOKER_CHUNK_MIB and STOKER_CHUNK_KIB"), std::string::npos)
      << e.error().what();
}

// An option is never the value of the one before it: "--depth --workers 2"
// is a missing value, not a depth of "--workers".
TEST(Config, AnOptionIsNotTakenAsTheValueBeforeIt) {
  std::vector<std::string> args = {"--depth", "--workers", "2"};
  auto c = Config{}.apply_args(args);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().what().find("--depth needs a value"), std::string::npos) << c.error().what();
}

}  // namespace
}  // namespace stoker::engine
