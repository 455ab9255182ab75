#include "client/cli/reduce_in_parts.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "client/channel_factory.h"
#include "client/cli/command.h"
#include "client/input/float_source.h"
#include "client/input/part_source.h"
#include "client/parallel_streams.h"

namespace gpureduce::cli {

// --streams N: the input's contiguous parts, each read by a source of its own, sent at once.
absl::StatusOr<v1::ReduceResponse> SendInParts(const ReduceFlags& f,
                                               const client::SourceOptions& source_options,
                                               uint64_t total, const v1::ReduceSpec& spec,
                                               const client::StreamOptions& options,
                                               absl::Status* input_error) {
  std::vector<std::unique_ptr<client::ReducerClient>> connections;
  std::vector<client::ReducerClient*> clients;
  std::vector<client::StreamPart> parts;
  // A connection per part, so the parts use several cores and connections. A list of servers:
  // part i goes to server i % n (and to the next if that one fails); a DNS name: round robin.
  const std::vector<std::pair<uint64_t, uint64_t>> split = client::SplitIntoParts(total, f.streams);
  const std::vector<std::string> targets = client::PartTargets(f.connection.target, split.size());
  const bool in_order = client::ListsServers(f.connection.target);
  for (const auto& [begin, count] : split) {
    auto open = [source_options, begin = begin,
                 count = count]() -> absl::StatusOr<std::unique_ptr<client::FloatSource>> {
      absl::StatusOr<std::unique_ptr<client::FloatSource>> whole =
          client::OpenSource(source_options);
      if (!whole.ok()) return whole.status();
      absl::StatusOr<std::unique_ptr<client::PartSource>> part =
          client::PartSource::Open(std::move(*whole), begin, count);
      if (!part.ok()) return part.status();
      return std::unique_ptr<client::FloatSource>(std::move(*part));
    };
    absl::StatusOr<std::unique_ptr<client::FloatSource>> first = open();
    if (!first.ok()) return *input_error = first.status();
    auto source = std::make_shared<std::unique_ptr<client::FloatSource>>(std::move(*first));
    parts.push_back({begin, count,
                     [source, input_error](absl::Span<float> out) {
                       absl::StatusOr<size_t> filled = (*source)->Read(out);
                       if (!filled.ok()) *input_error = filled.status();
                       return filled;
                     },
                     // Sent again (its server went away): read the part from its start.
                     [source, open]() -> absl::Status {
                       absl::StatusOr<std::unique_ptr<client::FloatSource>> reopened = open();
                       if (!reopened.ok()) return reopened.status();
                       *source = std::move(*reopened);
                       return absl::OkStatus();
                     }});
    ConnectionOptions part_connection = f.connection;
    part_connection.target = targets[parts.size() - 1];
    absl::StatusOr<std::unique_ptr<client::ReducerClient>> connection =
        Connect(part_connection, /*own_connection=*/true,
                in_order ? client::Balancing::kInOrder : client::Balancing::kRoundRobin);
    if (!connection.ok()) return *input_error = connection.status();
    connections.push_back(std::move(*connection));
    clients.push_back(connections.back().get());
  }
  return client::ReduceInParts(clients, spec, std::move(parts), options);
}

// The client's reference for --streams --verify: a second pass over the input, in order.
absl::Status ReferencePass(const client::SourceOptions& source_options, size_t chunk_elements,
                           client::RunningReference& reference) {
  absl::StatusOr<std::unique_ptr<client::FloatSource>> source = client::OpenSource(source_options);
  if (!source.ok()) return source.status();
  std::vector<float> chunk(chunk_elements);
  while (true) {
    absl::StatusOr<size_t> filled = (*source)->Read(absl::MakeSpan(chunk));
    if (!filled.ok()) return filled.status();
    if (*filled == 0) return absl::OkStatus();
    reference.Add(absl::MakeConstSpan(chunk.data(), *filled));
  }
}
}  // namespace gpureduce::cli
