// TLS, mutual TLS and bearer tokens against the real server, with certificates that openssl
// makes for each run: who gets in, who is refused and with which code, and that health stays
// open for probes. The CLI and gpureduce-load speak the same flags.

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/load/load_runner.h"
#include "client/load/workload.h"
#include "gmock/gmock.h"
#include "grpcpp/client_context.h"
#include "gtest/gtest.h"
#include "tests/integration/server_process.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"
#include "tests/support/test_certificates.h"
#include "tests/support/wire.h"

namespace gpureduce::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kToken[] = "s3cret-token-for-this-run";

// The certificates of tests/support/test_certificates.h, and token files beside them.
class SecurityTest : public CertificatesTest {
 protected:
  static void SetUpTestSuite() {
    CertificatesTest::SetUpTestSuite();
    if (certificates_ == nullptr) return;
    std::ofstream(File("tokens")) << "# tokens of this run\n\n  other-token  \n" << kToken << "\n";
    std::ofstream(File("token")) << kToken << "\n";
    std::ofstream(File("wrong_token")) << "not-the-token\n";
  }

  static std::vector<std::string> TlsFlags() {
    return {"--tls-cert=" + File("server.pem"), "--tls-key=" + File("server.key")};
  }
  static client::ChannelSecurity Trusting(const char* ca) {
    client::ChannelSecurity security;
    security.tls_ca = File(ca);
    return security;
  }

  // The status of a 4097-float SUM through `security`, checked when OK.
  static absl::Status Sum(const std::string& target, const client::ChannelSecurity& security) {
    absl::StatusOr<std::unique_ptr<client::ReducerClient>> reducer =
        client::ReducerClient::Connect(target, security);
    if (!reducer.ok()) return reducer.status();
    const std::vector<float> data = MixedSignData(4097, FreshSeed());
    client::CallOptions options;
    options.timeout = absl::Seconds(10);
    absl::StatusOr<v1::ReduceResponse> got = (*reducer)->Reduce(Spec(v1::SUM), data, options);
    if (!got.ok()) return got.status();
    const std::string wrong = CheckAgainstReference(
        gpureduce::Op::kSum, ComputeReference(gpureduce::Op::kSum, data), got->value(), -1, 1e-9);
    return wrong.empty() ? absl::OkStatus() : absl::InternalError(wrong);
  }
};

TEST_F(SecurityTest, TlsServesItsClientsAndRefusesPlaintextAndOtherCas) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server =
      ServerProcess::Start(TlsFlags(), true, TestBackend(), Trusting("ca.pem"));
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string& target = (*server)->target();
  EXPECT_TRUE(Sum(target, Trusting("ca.pem")).ok());
  EXPECT_EQ(Sum(target, {}).code(), absl::StatusCode::kUnavailable) << "a plaintext client";
  EXPECT_EQ(Sum(target, Trusting("stranger_ca.pem")).code(), absl::StatusCode::kUnavailable)
      << "a client that trusts another CA";
  client::ChannelSecurity named = Trusting("ca.pem");
  named.tls_server_name = "localhost";  // the certificate names it too
  EXPECT_TRUE(Sum(target, named).ok());
  named.tls_server_name = "elsewhere.example";
  EXPECT_EQ(Sum(target, named).code(), absl::StatusCode::kUnavailable)
      << "a certificate that does not name the server";
  EXPECT_THAT((*server)->Log(), HasSubstr("transport TLS"));
}

TEST_F(SecurityTest, MutualTlsWantsAClientCertificateItsCaSigned) {
  std::vector<std::string> flags = TlsFlags();
  flags.push_back("--tls-client-ca=" + File("ca.pem"));
  client::ChannelSecurity client = Trusting("ca.pem");
  client.tls_cert = File("client.pem");
  client.tls_key = File("client.key");
  absl::StatusOr<std::unique_ptr<ServerProcess>> server =
      ServerProcess::Start(flags, true, TestBackend(), client);
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string& target = (*server)->target();
  EXPECT_TRUE(Sum(target, client).ok());
  EXPECT_EQ(Sum(target, Trusting("ca.pem")).code(), absl::StatusCode::kUnavailable)
      << "no client certificate";
  client::ChannelSecurity stranger = Trusting("ca.pem");
  stranger.tls_cert = File("stranger.pem");
  stranger.tls_key = File("stranger.key");
  EXPECT_EQ(Sum(target, stranger).code(), absl::StatusCode::kUnavailable)
      << "a client certificate another CA signed";
  EXPECT_THAT((*server)->Log(), HasSubstr("transport mutual TLS"));
}

TEST_F(SecurityTest, TokensGuardEveryReducerMethodButHealthStaysOpen) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server =
      ServerProcess::Start({"--auth-token-file=" + File("tokens")});
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string& target = (*server)->target();
  client::ChannelSecurity right, wrong;
  right.token_file = File("token");
  wrong.token_file = File("wrong_token");
  EXPECT_TRUE(Sum(target, right).ok());
  const absl::Status none = Sum(target, {});
  EXPECT_EQ(none.code(), absl::StatusCode::kUnauthenticated) << none;
  EXPECT_THAT(none.message(), HasSubstr("authorization: Bearer"));
  EXPECT_EQ(Sum(target, wrong).code(), absl::StatusCode::kPermissionDenied);

  std::unique_ptr<client::ReducerClient> anonymous = client::ReducerClient::Connect(target);
  EXPECT_EQ(anonymous->ListKernels().status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(anonymous->GetServerInfo().status().code(), absl::StatusCode::kUnauthenticated);
  std::vector<float> data = MixedSignData(1000, FreshSeed());
  EXPECT_EQ(StreamFloats(*anonymous, Spec(v1::MAX), data, 300).status().code(),
            absl::StatusCode::kUnauthenticated);
  absl::StatusOr<bool> serving = anonymous->IsServing();
  ASSERT_TRUE(serving.ok()) << serving.status();
  EXPECT_TRUE(*serving) << "health answers probes without a token";
  EXPECT_TRUE((*client::ReducerClient::Connect(target, right))->ListKernels().ok());
}

TEST_F(SecurityTest, TheCliAndTheLoadGeneratorSpeakTlsAndTokens) {
  std::vector<std::string> flags = TlsFlags();
  flags.push_back("--auth-token-file=" + File("tokens"));
  client::ChannelSecurity security = Trusting("ca.pem");
  security.token_file = File("token");
  absl::StatusOr<std::unique_ptr<ServerProcess>> server =
      ServerProcess::Start(flags, true, TestBackend(), security);
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string secure =
      absl::StrCat(" --target=", (*server)->target(), " --tls-ca=", File("ca.pem"),
                   " --token-file=", File("token"));
  EXPECT_EQ(std::system(
                absl::StrCat(CliBinary(), " reduce --random 100003 --verify", secure, " >/dev/null")
                    .c_str()),
            0);
  EXPECT_EQ(std::system(absl::StrCat(CliBinary(), " health", secure, " >/dev/null").c_str()), 0);
  const int plaintext = std::system(
      absl::StrCat(CliBinary(), " info --timeout=5s --target=", (*server)->target(), " 2>/dev/null")
          .c_str());
  EXPECT_EQ(WEXITSTATUS(plaintext), 1) << "the server refuses a plaintext CLI";

  client::WorkloadOptions work;
  work.floats = 4097;
  absl::StatusOr<client::Workload> workload = client::Workload::Make(work);
  ASSERT_TRUE(workload.ok());
  client::LoadOptions load;
  load.target = (*server)->target();
  load.security = security;
  load.concurrency = 2;
  load.warmup = absl::Milliseconds(100);
  load.duration = absl::Milliseconds(500);
  absl::StatusOr<client::LoadResult> result = client::RunLoad(load, *workload);
  ASSERT_TRUE(result.ok()) << result.status();
  // Answers at all, not a rate: under ASan on a loaded 2-core machine, 500 ms gave 1 answer.
  EXPECT_GT(result->ok, 0u);
  EXPECT_EQ(result->failed + result->wrong, 0u) << result->first_error << result->first_wrong;
}

}  // namespace
}  // namespace gpureduce::testing
