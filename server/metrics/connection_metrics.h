#pragma once

// The connection gate's metrics (server/connections/): connections open, refused at accept by
// the bound they would have broken, and evicted for abuse, by reason.

#include <memory>

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace gpureduce::server {

enum class ConnectionRefusal { kServerFull = 0, kClientFull = 1, kCoolingDown = 2, kSamePeer = 3 };
enum class Eviction { kCancelledCalls = 0, kLiveStreams = 1, kUnaccountedBytes = 2 };

class ConnectionMetrics {
 public:
  explicit ConnectionMetrics(prometheus::Registry& registry);
  ConnectionMetrics(const ConnectionMetrics&) = delete;
  ConnectionMetrics& operator=(const ConnectionMetrics&) = delete;

  void Opened() { open_.Increment(); }
  void Closed() { open_.Decrement(); }
  void Refused(ConnectionRefusal reason) { refused_[int(reason)]->Increment(); }
  void Evicted(Eviction reason) { evicted_[int(reason)]->Increment(); }

 private:
  prometheus::Gauge& open_;
  prometheus::Family<prometheus::Counter>& refused_family_;
  prometheus::Family<prometheus::Counter>& evicted_family_;
  prometheus::Counter* refused_[4];
  prometheus::Counter* evicted_[3];
};

}  // namespace gpureduce::server
