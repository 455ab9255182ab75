#include "server/shared_memory/local_peer.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace gpureduce::server {

absl::Status CheckLocalPeer(absl::string_view peer) {
  if (absl::StartsWith(peer, "unix:") || absl::StartsWith(peer, "unix-abstract:") ||
      absl::StartsWith(peer, "ipv4:127.") || absl::StartsWith(peer, "ipv6:[::1]:") ||
      absl::StartsWith(peer, "ipv6:[::ffff:127.")) {
    return absl::OkStatus();
  }
  return absl::PermissionDeniedError(absl::StrCat(
      "shared memory is for clients on the server's host, and this call came from ", peer,
      "; a server whose local clients reach it through another address (containers that share "
      "an IPC namespace over a bridge network) allows them with --shared-memory-peers=any"));
}

}  // namespace gpureduce::server
