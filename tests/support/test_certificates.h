#pragma once

// Certificates that openssl makes for one test run, in a fresh folder removed afterwards: a CA
// ("ca"), a server certificate for 127.0.0.1 and localhost it signed ("server"), a client
// certificate it signed ("client"), and a second CA with a client certificate of its own
// ("stranger_ca", "stranger"). Each NAME has NAME.pem and NAME.key (PEM).

#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

namespace gpureduce::testing {

class TestCertificates {
 public:
  // Null when openssl could not make them (is it installed?).
  static std::unique_ptr<TestCertificates> Make();
  ~TestCertificates();
  TestCertificates(const TestCertificates&) = delete;
  TestCertificates& operator=(const TestCertificates&) = delete;

  // The folder, where a test may write files of its own.
  const std::string& dir() const { return dir_; }
  // A file in it: "ca.pem", "server.key", ...
  std::string File(absl::string_view name) const;

 private:
  explicit TestCertificates(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

// A fixture whose tests share one TestCertificates, made before the suite's first test; each
// test skips, saying why, where openssl could not make them.
class CertificatesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite();
  static void TearDownTestSuite();
  void SetUp() override;

  static std::string File(absl::string_view name) { return certificates_->File(name); }

  static TestCertificates* certificates_;  // null where openssl failed
};

}  // namespace gpureduce::testing
