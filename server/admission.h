#pragma once

// Bounds on requests in progress, for the whole server and for each client: beyond either the
// server answers RESOURCE_EXHAUSTED at once rather than queueing without limit. The global bound
// is what bounds payload memory; the per-client bound keeps one client (many connections from
// one address included) from taking every slot.

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace gpureduce::server {

class Admission {
 public:
  // Returns its place on destruction. Move-only.
  class Slot {
   public:
    Slot(Slot&& other) noexcept;
    Slot& operator=(Slot&& other) noexcept;
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot();

   private:
    friend class Admission;
    Slot(Admission* owner, std::string client) : owner_(owner), client_(std::move(client)) {}
    void Release();

    Admission* owner_;
    std::string client_;
  };

  // `per_client_limit` 0 means the same as `limit`.
  Admission(uint32_t limit, uint32_t per_client_limit);

  enum class Bound { kServer, kClient };

  // A slot for a request of `client` (see ClientOf), or RESOURCE_EXHAUSTED saying which bound
  // was reached (also in `*reached`, when given).
  absl::StatusOr<Slot> TryAcquire(absl::string_view client, Bound* reached = nullptr);

  // Who a request comes from, for the per-client bound: the address of gRPC's peer string
  // without the port ("ipv4:10.0.0.7:53122" -> "ipv4:10.0.0.7", "ipv6:[::1]:5000" ->
  // "ipv6:[::1]"); other peers (unix sockets) as they are. Clients behind one proxy or NAT
  // share an address and so a quota.
  static std::string ClientOf(absl::string_view peer);

  uint32_t limit() const { return limit_; }
  uint32_t per_client_limit() const { return per_client_limit_; }
  uint32_t in_use() const;
  uint32_t in_use_by(absl::string_view client) const;

 private:
  const uint32_t limit_;
  const uint32_t per_client_limit_;
  mutable absl::Mutex mu_;
  uint32_t in_use_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<std::string, uint32_t> by_client_ ABSL_GUARDED_BY(mu_);  // no zeros
};

}  // namespace gpureduce::server
