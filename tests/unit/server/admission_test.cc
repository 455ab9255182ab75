#include "server/admission.h"

#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace gpureduce::server {
namespace {

TEST(AdmissionTest, AdmitsUpToTheLimitAndReleasesOnDestruction) {
  Admission admission(2);
  std::optional<Admission::Slot> a = admission.TryAcquire();
  std::optional<Admission::Slot> b = admission.TryAcquire();
  ASSERT_TRUE(a.has_value());
  ASSERT_TRUE(b.has_value());
  EXPECT_FALSE(admission.TryAcquire().has_value());
  EXPECT_EQ(admission.in_use(), 2u);
  a.reset();
  EXPECT_EQ(admission.in_use(), 1u);
  std::optional<Admission::Slot> c = admission.TryAcquire();
  EXPECT_TRUE(c.has_value());
}

TEST(AdmissionTest, MovedSlotsReleaseExactlyOnce) {
  Admission admission(1);
  {
    std::optional<Admission::Slot> slot = admission.TryAcquire();
    ASSERT_TRUE(slot.has_value());
    Admission::Slot moved = std::move(*slot);
    slot.reset();
    EXPECT_EQ(admission.in_use(), 1u);
    Admission::Slot assigned = std::move(moved);
    EXPECT_EQ(admission.in_use(), 1u);
  }
  EXPECT_EQ(admission.in_use(), 0u);
}

}  // namespace
}  // namespace gpureduce::server
