// The shared-memory registry's bookkeeping and the names it accepts, without a server: limits,
// reservations while a registration runs, failed registrations, unregistration under a holder.

#include "server/shared_memory/region_registry.h"

#include <unistd.h>

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "runtime/cpu/cpu_backend.h"
#include "server/shared_memory/local_peer.h"
#include "server/shared_memory/region_names.h"
#include "tests/unit/server/shm_test_object.h"

namespace gpureduce::server {
namespace {

using Object = testing::ShmTestObject;

class RegionRegistryTest : public ::testing::Test {
 protected:
  absl::StatusOr<std::shared_ptr<const Region>> Register(RegionRegistry& registry,
                                                         const std::string& name,
                                                         const Object& object, uint64_t bytes) {
    RegionInfo info;
    info.name = name;
    info.key = object.key();
    info.byte_size = bytes;
    return registry.Register(name, bytes, [&] { return Region::OpenSystem(info, backend_); });
  }

  runtime::CpuBackend backend_{1};
};

TEST_F(RegionRegistryTest, RefusesEverythingWhenNotEnabled) {
  RegionRegistry registry(RegionLimits{});
  EXPECT_EQ(registry.CheckEnabled().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(registry.Find("x").status().code(), absl::StatusCode::kPermissionDenied);
}

TEST_F(RegionRegistryTest, CountsBytesAndRegionsAndFreesThemOnUnregister) {
  RegionRegistry registry(RegionLimits{true, 2, 8192});
  const Object object(8192);
  ASSERT_TRUE(Register(registry, "a", object, 4096).ok());
  EXPECT_EQ(registry.total_bytes(), 4096u);
  EXPECT_EQ(Register(registry, "b", object, 8192).status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(registry.total_bytes(), 4096u) << "a refused registration kept its bytes";
  ASSERT_TRUE(Register(registry, "b", object, 4096).ok());
  EXPECT_EQ(Register(registry, "c", object, 4).status().code(),
            absl::StatusCode::kResourceExhausted);
  ASSERT_TRUE(registry.Unregister("a").ok());
  EXPECT_EQ(registry.total_bytes(), 4096u);
  EXPECT_EQ(registry.List().size(), 1u);
  EXPECT_EQ(registry.UnregisterAll(), std::vector<std::string>{"b"});
  EXPECT_EQ(registry.total_bytes(), 0u);
}

TEST_F(RegionRegistryTest, AFailedOpenLeavesNothingReserved) {
  RegionRegistry registry(RegionLimits{true, 1, 1 << 20});
  const Object object(64);
  EXPECT_EQ(Register(registry, "a", object, 128).status().code(),
            absl::StatusCode::kInvalidArgument);  // past the object's end
  EXPECT_EQ(registry.total_bytes(), 0u);
  EXPECT_TRUE(Register(registry, "a", object, 64).ok()) << "the name stayed reserved";
}

TEST_F(RegionRegistryTest, ANameBeingRegisteredIsNeitherFoundNorTakenTwice) {
  RegionRegistry registry(RegionLimits{true, 4, 1 << 20});
  const Object object(64);
  absl::StatusOr<std::shared_ptr<const Region>> inner;
  const absl::StatusOr<std::shared_ptr<const Region>> outer =
      registry.Register("a", 64, [&]() -> absl::StatusOr<std::shared_ptr<Region>> {
        EXPECT_EQ(registry.Find("a").status().code(), absl::StatusCode::kNotFound);
        inner = Register(registry, "a", object, 64);
        EXPECT_TRUE(registry.UnregisterAll().empty());
        RegionInfo info;
        info.name = "a";
        info.key = object.key();
        info.byte_size = 64;
        return Region::OpenSystem(info, backend_);
      });
  ASSERT_TRUE(outer.ok()) << outer.status();
  EXPECT_EQ(inner.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(registry.Find("a").ok());
}

TEST_F(RegionRegistryTest, ARequestKeepsAnUnregisteredRegionOpen) {
  RegionRegistry registry(RegionLimits{true, 4, 1 << 20});
  const Object object(64);
  ASSERT_TRUE(Register(registry, "a", object, 64).ok());
  absl::StatusOr<std::shared_ptr<const Region>> found = registry.Find("a");
  ASSERT_TRUE(found.ok());
  const Region::Use use(*found);
  EXPECT_EQ(use->requests_in_flight(), 1u);
  ASSERT_TRUE(registry.Unregister("a").ok());
  const runtime::SharedSource source = use->Source(4, 32, 4);
  EXPECT_EQ(source.count, 8u);
  EXPECT_EQ(source.file_offset, 4u);
  char byte = 0;
  EXPECT_EQ(pread(source.fd, &byte, 1, 0), 1) << "the region's descriptor closed under a request";
}

TEST(LocalPeerTest, OnlyLoopbackAndUnixSocketsAreLocal) {
  for (const char* peer : {"ipv4:127.0.0.1:5000", "ipv4:127.1.2.3:1", "ipv6:[::1]:80",
                           "ipv6:[::ffff:127.0.0.1]:80", "unix:/tmp/s", "unix-abstract:x"}) {
    EXPECT_TRUE(CheckLocalPeer(peer).ok()) << peer;
  }
  for (const char* peer : {"ipv4:10.0.0.7:5000", "ipv4:128.0.0.1:5", "ipv6:[2001:db8::1]:80",
                           "ipv6:[::ffff:10.0.0.1]:80", "ipv4:1127.0.0.1:1", ""}) {
    const absl::Status status = CheckLocalPeer(peer);
    EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << peer;
    EXPECT_NE(status.message().find("--shared-memory-peers=any"), absl::string_view::npos);
  }
}

TEST_F(RegionRegistryTest, AnyPeerIsAllowedOnlyWhenAsked) {
  RegionLimits local{true};
  EXPECT_EQ(RegionRegistry(local).CheckCaller("ipv4:10.1.1.1:9").code(),
            absl::StatusCode::kPermissionDenied);
  local.any_peer = true;
  EXPECT_TRUE(RegionRegistry(local).CheckCaller("ipv4:10.1.1.1:9").ok());
  EXPECT_EQ(RegionRegistry(RegionLimits{}).CheckCaller("unix:/s").code(),
            absl::StatusCode::kPermissionDenied);
}

TEST(RegionNamesTest, AcceptsPlainNamesOnly) {
  EXPECT_TRUE(CheckRegionName("a.b_c-9").ok());
  EXPECT_TRUE(CheckObjectKey("/gpureduce-1-abc").ok());
  for (const char* name : {"", "a/b", "a b", "a\n"}) {
    EXPECT_EQ(CheckRegionName(name).code(), absl::StatusCode::kInvalidArgument) << name;
  }
  EXPECT_FALSE(CheckRegionName(std::string(129, 'a')).ok());
  for (const char* key : {"", "x", "/", "/.", "/..", "/a/b", "//a", "/a b"}) {
    EXPECT_EQ(CheckObjectKey(key).code(), absl::StatusCode::kInvalidArgument) << key;
  }
  EXPECT_FALSE(CheckObjectKey("/" + std::string(256, 'a')).ok());
  EXPECT_TRUE(CheckObjectKey("/" + std::string(255, 'a')).ok());
}

}  // namespace
}  // namespace gpureduce::server
