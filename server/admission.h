#pragma once

// A bound on requests in progress: beyond it the server answers RESOURCE_EXHAUSTED at once
// rather than queueing without limit, which is what bounds its payload memory.

#include <atomic>
#include <cstdint>
#include <optional>

namespace gpureduce::server {

class Admission {
 public:
  // Returns its place on destruction. Move-only.
  class Slot {
   public:
    explicit Slot(Admission* owner) : owner_(owner) {}
    Slot(Slot&& other) noexcept : owner_(other.owner_) { other.owner_ = nullptr; }
    Slot& operator=(Slot&& other) noexcept;
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot();

   private:
    Admission* owner_;
  };

  explicit Admission(uint32_t limit) : limit_(limit) {}

  std::optional<Slot> TryAcquire();
  uint32_t limit() const { return limit_; }
  uint32_t in_use() const { return in_use_.load(std::memory_order_relaxed); }

 private:
  const uint32_t limit_;
  std::atomic<uint32_t> in_use_{0};
};

}  // namespace gpureduce::server
