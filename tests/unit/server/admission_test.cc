#include "server/admission.h"

#include <optional>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpureduce::server {
namespace {

using ::testing::HasSubstr;

TEST(AdmissionTest, AdmitsUpToTheLimitAndReleasesOnDestruction) {
  Admission admission(2, 0);
  std::optional<absl::StatusOr<Admission::Slot>> a = admission.TryAcquire("x");
  std::optional<absl::StatusOr<Admission::Slot>> b = admission.TryAcquire("y");
  ASSERT_TRUE(a->ok());
  ASSERT_TRUE(b->ok());
  absl::StatusOr<Admission::Slot> refused = admission.TryAcquire("z");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.status().message(), HasSubstr("--max-concurrent-requests"));
  EXPECT_EQ(admission.in_use(), 2u);
  a.reset();
  EXPECT_EQ(admission.in_use(), 1u);
  EXPECT_EQ(admission.in_use_by("x"), 0u);
  EXPECT_TRUE(admission.TryAcquire("z").ok());
}

TEST(AdmissionTest, OneClientCannotTakeEverySlot) {
  Admission admission(4, 2);
  std::vector<Admission::Slot> held;
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<Admission::Slot> slot = admission.TryAcquire("ipv4:10.0.0.1");
    ASSERT_TRUE(slot.ok()) << slot.status();
    held.push_back(std::move(*slot));
  }
  absl::StatusOr<Admission::Slot> third = admission.TryAcquire("ipv4:10.0.0.1");
  ASSERT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(third.status().message(), HasSubstr("ipv4:10.0.0.1"));
  EXPECT_THAT(third.status().message(), HasSubstr("--max-requests-per-client"));
  EXPECT_EQ(admission.in_use(), 2u) << "a refusal takes nothing";
  EXPECT_EQ(admission.in_use_by("ipv4:10.0.0.1"), 2u);
  // Another client still gets the rest.
  absl::StatusOr<Admission::Slot> other = admission.TryAcquire("ipv4:10.0.0.2");
  EXPECT_TRUE(other.ok());
  held.pop_back();
  EXPECT_TRUE(admission.TryAcquire("ipv4:10.0.0.1").ok());
}

TEST(AdmissionTest, MovedSlotsReleaseExactlyOnce) {
  Admission admission(1, 1);
  {
    absl::StatusOr<Admission::Slot> slot = admission.TryAcquire("a");
    ASSERT_TRUE(slot.ok());
    Admission::Slot moved = std::move(*slot);
    EXPECT_EQ(admission.in_use(), 1u);
    Admission::Slot assigned = std::move(moved);
    EXPECT_EQ(admission.in_use(), 1u);
    EXPECT_EQ(admission.in_use_by("a"), 1u);
  }
  EXPECT_EQ(admission.in_use(), 0u);
  EXPECT_EQ(admission.in_use_by("a"), 0u);
}

TEST(AdmissionTest, AssigningOverAHeldSlotReleasesIt) {
  Admission admission(2, 0);
  absl::StatusOr<Admission::Slot> a = admission.TryAcquire("a");
  absl::StatusOr<Admission::Slot> b = admission.TryAcquire("b");
  ASSERT_TRUE(a.ok() && b.ok());
  *a = std::move(*b);
  EXPECT_EQ(admission.in_use(), 1u);
  EXPECT_EQ(admission.in_use_by("a"), 0u);
  EXPECT_EQ(admission.in_use_by("b"), 1u);
}

TEST(AdmissionTest, AClientIsItsAddressWithoutThePort) {
  EXPECT_EQ(Admission::ClientOf("ipv4:127.0.0.1:43210"), "ipv4:127.0.0.1");
  EXPECT_EQ(Admission::ClientOf("ipv6:[::1]:50051"), "ipv6:[::1]");
  EXPECT_EQ(Admission::ClientOf("ipv6:%5B::1%5D:50051"), "ipv6:%5B::1%5D");
  EXPECT_EQ(Admission::ClientOf("ipv6:[::1]"), "ipv6:[::1]");
  EXPECT_EQ(Admission::ClientOf("ipv4:10.1.2.3"), "ipv4:10.1.2.3");
  EXPECT_EQ(Admission::ClientOf("unix:/tmp/gpureduce.sock"), "unix:/tmp/gpureduce.sock");
  EXPECT_EQ(Admission::ClientOf(""), "");
}

}  // namespace
}  // namespace gpureduce::server
