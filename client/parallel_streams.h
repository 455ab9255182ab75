#pragma once

// One reduction sent as several streams at once: each stream carries one contiguous part of the
// array on a channel of its own, and the parts' answers combine exactly as one stream's would
// (float64 sums and products in part order, MEAN over the total count, the first occurrence and
// the first NaN across parts for ARGMIN/ARGMAX, by common/extreme_order.h). One gRPC stream is
// bound by one connection's transport; several use several cores and connections.

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "client/reducer_client.h"
#include "gpureduce/v1/reduce.pb.h"

namespace gpureduce::client {

struct StreamPart {
  uint64_t begin = 0;  // index of the part's first element in the whole array
  uint64_t count = 0;  // elements in the part, at least 1
  // The part's values in order, as ChunkFiller delivers them; 0 at its end.
  std::function<absl::StatusOr<size_t>(absl::Span<float> out)> fill;
  // Starts `fill` over from the part's first value, for a part sent again; unset: the part is
  // not sent again.
  std::function<absl::Status()> rewind;
};

// How often one part is sent in all, when the server that had it became UNAVAILABLE (it went
// away, or its connection did): each attempt is a new call, which the channel's round robin
// gives to another server of the target.
inline constexpr int kPartAttempts = 3;

// Whether a gRPC target lists several servers ("ipv4:A:P,B:P", "ipv6:..."). A DNS name
// ("dns:///service:50051") may resolve to several too, but which ones is the resolver's to say.
bool ListsServers(absl::string_view target);

// The target each of `parts` parts connects to: for a list ("ipv4:A:P,B:P,C:P") part i's lists
// the same servers starting at server i % n, to be used in order (Balancing::kInOrder): part i
// goes to server i % n, and to the next one if that one fails. Any other target, as it is.
std::vector<std::string> PartTargets(absl::string_view target, size_t parts);

// [begin, count) of `streams` contiguous parts of `n` elements, as even as can be (the first
// n % streams parts one element longer); fewer parts when n < streams, none when n is 0.
std::vector<std::pair<uint64_t, uint64_t>> SplitIntoParts(uint64_t n, uint32_t streams);

// Sends part i on clients[i] (clients.size() == parts.size() >= 1), all at once, and combines
// the answers; the response's `streams` says how many. `spec.expected_count`, when set, must be
// the parts' total. A part whose server became UNAVAILABLE is sent again from its start (up to
// kPartAttempts in all, where it can rewind); the response's `stream_retries` counts those. A
// part that fails for good cancels the others, and its error is returned with the part named.
// options.on_progress, if set, receives the bytes sent over all parts. A client may serve
// several parts (the same pointer more than once).
absl::StatusOr<v1::ReduceResponse> ReduceInParts(const std::vector<ReducerClient*>& clients,
                                                 const v1::ReduceSpec& spec,
                                                 std::vector<StreamPart> parts,
                                                 const StreamOptions& options);

// How the parts' answers combine: as the server combines its own pieces (Combine, then Finalize,
// common/reduction/). responses[i] answered the part starting at begins[i], with MEAN asked as
// SUM (a mean of means would round twice). For tests and ReduceInParts.
v1::ReduceResponse CombineParts(v1::Op op, const std::vector<uint64_t>& begins,
                                const std::vector<v1::ReduceResponse>& responses);

}  // namespace gpureduce::client
