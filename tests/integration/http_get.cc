#include "tests/integration/http_get.h"

#include "absl/strings/str_cat.h"
#include "civetweb.h"

namespace gpureduce::testing {

absl::StatusOr<std::string> HttpGet(int port, const std::string& path) {
  char error[256] = "";
  mg_connection* connection =
      mg_download("127.0.0.1", port, 0, error, sizeof(error),
                  "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path.c_str());
  if (connection == nullptr) {
    return absl::UnavailableError(absl::StrCat("GET 127.0.0.1:", port, path, ": ", error));
  }
  const int status = mg_get_response_info(connection)->status_code;
  std::string body;
  char buffer[16384];
  for (int n; (n = mg_read(connection, buffer, sizeof(buffer))) > 0;) body.append(buffer, n);
  mg_close_connection(connection);
  if (status != 200) {
    return absl::UnavailableError(absl::StrCat("GET ", path, ": HTTP ", status, ": ", body));
  }
  return body;
}

}  // namespace gpureduce::testing
