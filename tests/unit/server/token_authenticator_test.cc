#include "server/auth/token_authenticator.h"

#include <cstdio>
#include <fstream>
#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpureduce::server {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<TokenAuthenticator> Tokens(const char* text) {
  absl::StatusOr<std::unique_ptr<TokenAuthenticator>> tokens =
      TokenAuthenticator::FromText(text, "test tokens");
  EXPECT_TRUE(tokens.ok()) << tokens.status();
  return tokens.ok() ? std::move(*tokens) : nullptr;
}

TEST(TokenAuthenticatorTest, AcceptsEveryListedTokenAndNothingElse) {
  auto tokens = Tokens("# the team's tokens\n\nalpha-1\n  beta-2  \r\n#gamma-3\n");
  ASSERT_NE(tokens, nullptr);
  EXPECT_EQ(tokens->size(), 2u);
  EXPECT_TRUE(tokens->Check("Bearer alpha-1").ok());
  EXPECT_TRUE(tokens->Check("Bearer beta-2").ok()) << "whitespace is not part of a token";
  EXPECT_TRUE(tokens->Check("bearer alpha-1").ok()) << "the scheme is case-insensitive";
  for (const char* refused : {"Bearer #gamma-3", "Bearer gamma-3", "Bearer alpha-",
                              "Bearer alpha-12", "Bearer beta-2x"}) {
    const absl::Status status = tokens->Check(refused);
    EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << refused;
  }
}

TEST(TokenAuthenticatorTest, NoBearerTokenIsUnauthenticated) {
  auto tokens = Tokens("alpha-1\n");
  ASSERT_NE(tokens, nullptr);
  for (std::optional<absl::string_view> missing :
       {std::optional<absl::string_view>(), std::optional<absl::string_view>("alpha-1"),
        std::optional<absl::string_view>("Basic YWxwaGEtMQ=="),
        std::optional<absl::string_view>(""), std::optional<absl::string_view>("Bearer  ")}) {
    const absl::Status status = tokens->Check(missing);
    EXPECT_EQ(status.code(), absl::StatusCode::kUnauthenticated);
    EXPECT_THAT(status.message(),
                ::testing::AnyOf(HasSubstr("--token-file"), HasSubstr("no token")));
  }
}

TEST(TokenAuthenticatorTest, AFileWithoutATokenOrNoFileIsAnError) {
  EXPECT_EQ(TokenAuthenticator::FromText("# only comments\n\n", "f").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(TokenAuthenticator::FromFile("/nonexistent/tokens").status().code(),
            absl::StatusCode::kNotFound);
  char path[] = "/tmp/gpureduce-tokens-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << "from-a-file\n";
  absl::StatusOr<std::unique_ptr<TokenAuthenticator>> tokens = TokenAuthenticator::FromFile(path);
  std::remove(path);
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  EXPECT_TRUE((*tokens)->Check("Bearer from-a-file").ok());
}

}  // namespace
}  // namespace gpureduce::server
