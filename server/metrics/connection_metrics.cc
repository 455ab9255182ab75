#include "server/metrics/connection_metrics.h"

namespace gpureduce::server {

ConnectionMetrics::ConnectionMetrics(prometheus::Registry& registry)
    : open_(prometheus::BuildGauge()
                .Name("gpureduce_connections_open")
                .Help("TCP connections the server has accepted and not yet seen closed")
                .Register(registry)
                .Add({})),
      refused_family_(prometheus::BuildCounter()
                          .Name("gpureduce_connections_refused_total")
                          .Help("Connections closed at accept: server_full (--max-connections), "
                                "client_full (--max-connections-per-client), cooling_down (the "
                                "address had a connection evicted within --eviction-cooldown), "
                                "same_peer (a connection from the same address and port is "
                                "still open)")
                          .Register(registry)),
      evicted_family_(prometheus::BuildCounter()
                          .Name("gpureduce_connections_evicted_total")
                          .Help("Connections the server ended for abuse (GOAWAY, then closed): "
                                "cancelled_calls (calls cancelled faster than "
                                "--max-cancelled-calls-per-second), live_streams (more streams "
                                "in the server than a connection may have open: rapid reset), "
                                "unaccounted_bytes (message bytes beyond what the connection's "
                                "calls may hold)")
                          .Register(registry)),
      refused_{&refused_family_.Add({{"reason", "server_full"}}),
               &refused_family_.Add({{"reason", "client_full"}}),
               &refused_family_.Add({{"reason", "cooling_down"}}),
               &refused_family_.Add({{"reason", "same_peer"}})},
      evicted_{&evicted_family_.Add({{"reason", "cancelled_calls"}}),
               &evicted_family_.Add({{"reason", "live_streams"}}),
               &evicted_family_.Add({{"reason", "unaccounted_bytes"}})} {}

}  // namespace gpureduce::server
