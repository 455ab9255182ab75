#include "server/connections/channelz_streams.h"

#include <grpc/grpc.h>
#include <grpc/support/alloc.h>

#include <string>

#include "absl/strings/numbers.h"
#include "nlohmann/json.hpp"

namespace gpureduce::server {
namespace {

// Channelz answers in JSON text that the caller frees.
nlohmann::json Take(char* text) {
  if (text == nullptr) return nlohmann::json();
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  gpr_free(text);
  return parsed;
}

// Channelz writes 64-bit counts and ids as strings.
int64_t Count(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  int64_t value = 0;
  if (it == object.end() || !it->is_string() || !absl::SimpleAtoi(it->get<std::string>(), &value)) {
    return 0;
  }
  return value;
}

}  // namespace

bool ChannelzStreams::FindServer() {
  if (server_id_ != 0) return true;
  const nlohmann::json servers = Take(grpc_channelz_get_servers(0));
  if (!servers.is_object() || !servers.contains("server") || servers["server"].empty()) {
    return false;
  }
  server_id_ = Count(servers["server"][0].value("ref", nlohmann::json::object()), "serverId");
  return server_id_ != 0;
}

int64_t ChannelzStreams::CallsStarted() {
  if (!FindServer()) return -1;
  const nlohmann::json server = Take(grpc_channelz_get_server(server_id_));
  if (!server.is_object() || !server.contains("server")) return -1;
  return Count(server["server"].value("data", nlohmann::json::object()), "callsStarted");
}

std::vector<ConnectionStreams> ChannelzStreams::Read() {
  std::vector<ConnectionStreams> result;
  if (!FindServer()) return result;
  intptr_t start = 0;
  while (true) {
    const nlohmann::json page = Take(grpc_channelz_get_server_sockets(server_id_, start, 512));
    if (!page.is_object() || !page.contains("socketRef")) return result;
    for (const nlohmann::json& ref : page["socketRef"]) {
      const int64_t id = Count(ref, "socketId");
      start = static_cast<intptr_t>(id) + 1;
      // "chttp2 ipv4:127.0.0.1:55884": the transport's name and the peer as gRPC writes it.
      std::string name = ref.value("name", "");
      name = name.substr(name.rfind(' ') + 1);
      const std::optional<PeerAddress> peer = ParseGrpcPeer(name);
      if (!peer.has_value()) continue;
      const nlohmann::json socket = Take(grpc_channelz_get_socket(id));
      if (!socket.is_object() || !socket.contains("socket")) continue;
      const nlohmann::json data = socket["socket"].value("data", nlohmann::json::object());
      result.push_back({*peer, Count(data, "streamsStarted") - Count(data, "streamsSucceeded") -
                                   Count(data, "streamsFailed")});
    }
    if (page.value("end", true) || page["socketRef"].empty()) return result;
  }
}

}  // namespace gpureduce::server
