// The server's transport security from its flags' files, with certificates openssl makes for the
// run: the flag combinations refused, and over loopback who a TLS or mutual-TLS server lets in.

#include "server/auth/server_credentials.h"

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"
#include "tests/support/test_certificates.h"
#include "tests/support/wire.h"
#include "tests/unit/server/in_process_server.h"

namespace gpureduce::server {
namespace {

using ::testing::HasSubstr;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class ServerCredentialsTest : public testing::CertificatesTest {
 protected:
  // A client trusting `ca`, presenting `client`'s certificate unless it is null.
  static std::shared_ptr<grpc::ChannelCredentials> Client(const char* ca, const char* client) {
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = ReadFile(File(ca));
    if (client != nullptr) {
      options.pem_cert_chain = ReadFile(File(std::string(client) + ".pem"));
      options.pem_private_key = ReadFile(File(std::string(client) + ".key"));
    }
    return grpc::SslCredentials(options);
  }

  // A 1023-float SUM through `credentials`: its status, and a mismatch with the reference as
  // INTERNAL.
  static grpc::Status Sum(const testing::InProcessServer& server,
                          const std::shared_ptr<grpc::ChannelCredentials>& credentials) {
    const std::vector<float> data = testing::MixedSignData(1023, testing::FreshSeed());
    v1::ReduceRequest request;
    *request.mutable_spec() = testing::Spec(v1::SUM);
    request.set_data(testing::Bytes(data));
    v1::ReduceResponse response;
    const grpc::Status status = v1::Reducer::NewStub(server.Channel(credentials))
                                    ->Reduce(testing::BoundedContext().get(), request, &response);
    if (!status.ok()) return status;
    const std::string wrong = testing::CheckAgainstReference(
        gpureduce::Op::kSum, testing::ComputeReference(gpureduce::Op::kSum, data), response.value(),
        -1, 1e-9);
    return wrong.empty() ? grpc::Status::OK : grpc::Status(grpc::StatusCode::INTERNAL, wrong);
  }
};

TEST_F(ServerCredentialsTest, FlagsThatDoNotGoTogetherOrFilesWithoutPemAreRefused) {
  struct Case {
    TlsFiles files;
    absl::StatusCode code;
    std::string says;
  };
  const Case cases[] = {
      {{File("server.pem"), "", ""}, absl::StatusCode::kInvalidArgument, "go together"},
      {{"", File("server.key"), ""}, absl::StatusCode::kInvalidArgument, "go together"},
      {{"", "", File("ca.pem")}, absl::StatusCode::kInvalidArgument, "--tls-client-ca needs"},
      {{File("absent.pem"), File("server.key"), ""}, absl::StatusCode::kNotFound, "absent.pem"},
      {{File("server.pem"), File("server.csr.absent"), ""},
       absl::StatusCode::kNotFound,
       "--tls-key"},
      {{File("server.pem"), File("server.ext"), ""},
       absl::StatusCode::kInvalidArgument,
       "--tls-key file " + File("server.ext") + " holds no PEM block"},
      {{File("server.pem"), File("server.key"), File("server.ext")},
       absl::StatusCode::kInvalidArgument,
       "--tls-client-ca file"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> made = MakeServerCredentials(c.files);
    const std::string what = c.files.cert + " | " + c.files.key + " | " + c.files.client_ca;
    EXPECT_EQ(made.status().code(), c.code) << what << ": " << made.status();
    EXPECT_THAT(std::string(made.status().message()), HasSubstr(c.says)) << what;
  }
}

TEST_F(ServerCredentialsTest, TheTransportIsDescribedAsTheFlagsAskForIt) {
  EXPECT_STREQ(DescribeTransport({}), "plaintext");
  EXPECT_STREQ(DescribeTransport({File("server.pem"), File("server.key"), ""}), "TLS");
  EXPECT_STREQ(DescribeTransport({File("server.pem"), File("server.key"), File("ca.pem")}),
               "mutual TLS");
}

TEST_F(ServerCredentialsTest, NoFilesIsPlaintext) {
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> plaintext = MakeServerCredentials({});
  ASSERT_TRUE(plaintext.ok()) << plaintext.status();
  testing::InProcessOptions options;
  options.credentials = *plaintext;
  const testing::InProcessServer server(options);
  EXPECT_TRUE(Sum(server, grpc::InsecureChannelCredentials()).ok());
  EXPECT_EQ(Sum(server, Client("ca.pem", nullptr)).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(ServerCredentialsTest, TlsServesClientsTrustingItsCaOnly) {
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> tls =
      MakeServerCredentials({File("server.pem"), File("server.key"), ""});
  ASSERT_TRUE(tls.ok()) << tls.status();
  testing::InProcessOptions options;
  options.credentials = *tls;
  const testing::InProcessServer server(options);
  const grpc::Status trusted = Sum(server, Client("ca.pem", nullptr));
  EXPECT_TRUE(trusted.ok()) << trusted.error_message();
  EXPECT_TRUE(Sum(server, Client("ca.pem", "client")).ok())
      << "a client certificate is not asked for, and does no harm";
  EXPECT_EQ(Sum(server, grpc::InsecureChannelCredentials()).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(Sum(server, Client("stranger_ca.pem", nullptr)).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

TEST_F(ServerCredentialsTest, MutualTlsRequiresAClientCertificateItsCaSigned) {
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> mutual =
      MakeServerCredentials({File("server.pem"), File("server.key"), File("ca.pem")});
  ASSERT_TRUE(mutual.ok()) << mutual.status();
  testing::InProcessOptions options;
  options.credentials = *mutual;
  const testing::InProcessServer server(options);
  const grpc::Status signed_client = Sum(server, Client("ca.pem", "client"));
  EXPECT_TRUE(signed_client.ok()) << signed_client.error_message();
  EXPECT_EQ(Sum(server, Client("ca.pem", nullptr)).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(Sum(server, Client("ca.pem", "stranger")).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(Sum(server, grpc::InsecureChannelCredentials()).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

}  // namespace
}  // namespace gpureduce::server
