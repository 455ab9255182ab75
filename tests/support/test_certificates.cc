#include "tests/support/test_certificates.h"

#include <stdlib.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace gpureduce::testing {
namespace {

// `script` quoted for bash -c '...'.
std::string SingleQuoted(const std::string& script) {
  std::string out = "'";
  for (char c : script) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::unique_ptr<TestCertificates> TestCertificates::Make() {
  char dir[] = "/tmp/gpureduce-tls-XXXXXX";
  if (mkdtemp(dir) == nullptr) return nullptr;
  std::unique_ptr<TestCertificates> made(new TestCertificates(dir));
  const std::string script = absl::StrCat(
      "set -e; cd ", made->dir_, "; exec >openssl.log 2>&1\n",
      "key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out $1; }\n",
      "ca() { key $1.key; openssl req -x509 -new -key $1.key -out $1.pem -days 2 "
      "-subj \"/CN=$1\"; }\n",
      "cert() { key $1.key; openssl req -new -key $1.key -out $1.csr -subj \"/CN=$1\";"
      " printf '%s\\n' \"$3\" >$1.ext;"
      " openssl x509 -req -in $1.csr -CA $2.pem -CAkey $2.key -CAcreateserial -days 2"
      " -extfile $1.ext -out $1.pem; }\n",
      "ca ca; ca stranger_ca\n", "cert server ca 'subjectAltName=IP:127.0.0.1,DNS:localhost'\n",
      "cert client ca 'extendedKeyUsage=clientAuth'\n",
      "cert stranger stranger_ca 'extendedKeyUsage=clientAuth'\n");
  if (std::system(absl::StrCat("bash -c ", SingleQuoted(script)).c_str()) != 0) return nullptr;
  return made;
}

TestCertificates::~TestCertificates() { std::system(absl::StrCat("rm -rf ", dir_).c_str()); }

std::string TestCertificates::File(absl::string_view name) const {
  return absl::StrCat(dir_, "/", name);
}

TestCertificates* CertificatesTest::certificates_ = nullptr;

void CertificatesTest::SetUpTestSuite() { certificates_ = TestCertificates::Make().release(); }

void CertificatesTest::TearDownTestSuite() {
  delete certificates_;
  certificates_ = nullptr;
}

void CertificatesTest::SetUp() {
  if (certificates_ == nullptr) {
    GTEST_SKIP() << "openssl could not make the test certificates (is it installed?)";
  }
}

}  // namespace gpureduce::testing
