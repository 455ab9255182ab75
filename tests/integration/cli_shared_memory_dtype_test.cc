// `gpureduce reduce --shared-memory` with the dtypes beyond float32 (cli_shared_memory_test.cc
// has float32), as a user runs it against the real server on this host: float16 and float64
// .npy files (float16 with NaNs at an end and in the middle), bfloat16 as raw bytes with --dtype,
// and int32 whose sum passes 2^31, each lent with one list of ops (the NAN forms, var and std
// with --ddof=1) and --verify at awkward sizes. Every result is checked against the array API
// suites' reference (array_api_reference.h: long double and __int128 loops, none of the client's
// or the server's code), and nothing is left registered or in /dev/shm.

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/integration/array_api_arrays.h"
#include "tests/integration/array_api_reference.h"
#include "tests/integration/cli_shared_memory_fixture.h"
#include "tests/integration/server_process.h"
#include "tests/integration/test_files.h"
#include "tests/support/npy_bytes.h"
#include "tests/support/random_data.h"

namespace gpureduce::testing {
namespace {

using array_api::Array;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kOps[] =
    "sum,nansum,prod,min,nanmax,mean,nanmean,sum_squares,argmin,nanargmax,var,std,nanvar,nanstd";
constexpr size_t kLarge = 1000003;

std::string ScratchPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/gpureduce-cli-shm-dtype-", getpid(), "-", name);
}

// The CLI's input file for `a` and the flags that read it: a .npy of its dtype, or raw bytes
// with --dtype for bfloat16 (NumPy has none).
struct InputFile {
  std::string path;
  std::string flags;
};

InputFile WriteInput(const Array& a) {
  const char* descr = a.dtype == v1::FLOAT16   ? "<f2"
                      : a.dtype == v1::FLOAT64 ? "<f8"
                      : a.dtype == v1::INT32   ? "<i4"
                                               : nullptr;
  InputFile file{ScratchPath(descr != nullptr ? "input.npy" : "input.bin"), ""};
  std::ofstream out(file.path, std::ios::binary);
  if (descr != nullptr) {
    out << NpyHeaderBytes(
        1, absl::StrCat("{'descr': '", descr, "', 'fortran_order': False, 'shape': (", a.size(),
                        ",), }"));
  } else {
    file.flags = absl::StrCat("--dtype=", array_api::DTypeText(a.dtype));
  }
  out << a.bytes;
  return file;
}

// Values near 2^31 (and a few small negative ones): the sum of two passes 2^31.
Array BigInt32Array(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> values(n);
  for (size_t i = 0; i < n; ++i) {
    values[i] = i % 10 == 9 ? -static_cast<double>(rng() % 1000)
                            : static_cast<double>(std::numeric_limits<int32_t>::max() -
                                                  static_cast<int64_t>(rng() % 400000000));
  }
  return array_api::FromValues(v1::INT32, values);
}

// One typed result of the CLI's JSON as the server sent it.
v1::OpResult ResultFromJson(const nlohmann::json& json) {
  v1::OpResult result;
  v1::Op op = v1::OP_UNSPECIFIED;
  EXPECT_TRUE(v1::Op_Parse(absl::AsciiStrToUpper(json["op"].get<std::string>()), &op)) << json;
  result.set_op(op);
  v1::DType dtype = v1::DTYPE_UNSPECIFIED;
  EXPECT_TRUE(v1::DType_Parse(absl::AsciiStrToUpper(json["dtype"].get<std::string>()), &dtype));
  result.set_dtype(dtype);
  const nlohmann::json& value = json["value"];
  if (value.is_number()) {
    result.set_value(value.get<double>());
  } else {  // JsonNumber's spellings
    const std::string text = value.get<std::string>();
    result.set_value(text == "NaN"        ? std::numeric_limits<double>::quiet_NaN()
                     : text == "Infinity" ? std::numeric_limits<double>::infinity()
                                          : -std::numeric_limits<double>::infinity());
  }
  if (json.contains("int_value")) result.set_int_value(json["int_value"].get<int64_t>());
  result.set_index(json["index"].get<int64_t>());
  result.set_overflow(json["overflow"].get<bool>());
  return result;
}

struct Case {
  v1::DType dtype;
  size_t n;
};

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  return absl::StrCat(array_api::DTypeText(info.param.dtype), "x", info.param.n);
}

class CliSharedMemoryDTypeTest : public CliSharedMemoryFixture<::testing::TestWithParam<Case>> {};

// The array of each case: float16 with NaNs at its end and in its middle, bfloat16 with them at
// its start and in its middle (where there are three elements for them), float64 without.
Array CaseArray(const Case& c, uint64_t seed) {
  if (c.dtype == v1::INT32) return BigInt32Array(c.n, seed);
  Array a = array_api::RandomArray(c.dtype, c.n, seed);
  if (c.n >= 3 && c.dtype != v1::FLOAT64) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    array_api::Set(a, c.dtype == v1::FLOAT16 ? c.n - 1 : 0, nan);
    array_api::Set(a, c.n / 2, nan);
  }
  return a;
}

TEST_P(CliSharedMemoryDTypeTest, EveryOpOfTheListInOneRequestMatchesTheReference) {
  const Case c = GetParam();
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  const Array a = CaseArray(c, seed);
  const InputFile input = WriteInput(a);
  const CliRun run = Cli(absl::StrCat("reduce --shared-memory --json --verify --ddof=1 --op=", kOps,
                                      " ", input.flags, " ", input.path));
  std::remove(input.path.c_str());
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const nlohmann::json json = nlohmann::json::parse(run.out);
  SCOPED_TRACE(json.dump());
  EXPECT_EQ(json["count"], c.n);
  EXPECT_EQ(json["dtype"], array_api::DTypeText(c.dtype));
  EXPECT_EQ(json["timing"]["bytes"], a.bytes.size());
  EXPECT_EQ(json["client"]["shared_memory"]["bytes"], a.bytes.size());
  EXPECT_THAT(json["client"]["shared_memory"]["key"].get<std::string>(),
              HasSubstr(absl::StrCat("/gpureduce-", run.pid, "-")));

  const std::vector<std::string> names = absl::StrSplit(kOps, ',');
  ASSERT_EQ(json["results"].size(), names.size());
  ASSERT_EQ(json["verify_results"].size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    const v1::OpResult got = ResultFromJson(json["results"][i]);
    EXPECT_EQ(v1::Op_Name(got.op()), absl::AsciiStrToUpper(names[i]));
    EXPECT_EQ(array_api::Check(array_api::Reference(got.op(), a, 1.0), got.op(), got), "");
    EXPECT_EQ(json["verify_results"][i]["ok"], true) << json["verify_results"][i];
  }
  if (c.dtype == v1::INT32 && c.n >= 2) {  // exact past 2^31, where an int32 sum would wrap
    __extension__ __int128 sum = 0;
    for (size_t i = 0; i < c.n; ++i) sum += a.Int(i);
    ASSERT_GT(sum, __extension__ static_cast<__int128>(std::numeric_limits<int32_t>::max()));
    EXPECT_EQ(json["results"][0]["int_value"].get<int64_t>(), static_cast<int64_t>(sum));
    EXPECT_EQ(json["results"][0]["dtype"], "int64");
  }
  ExpectNothingLeft(run);
}

INSTANTIATE_TEST_SUITE_P(AwkwardSizes, CliSharedMemoryDTypeTest,
                         ::testing::Values(Case{v1::FLOAT16, 1}, Case{v1::FLOAT16, 2},
                                           Case{v1::FLOAT16, 31}, Case{v1::FLOAT16, kLarge},
                                           Case{v1::BFLOAT16, 1}, Case{v1::BFLOAT16, 2},
                                           Case{v1::BFLOAT16, 31}, Case{v1::BFLOAT16, kLarge},
                                           Case{v1::FLOAT64, 1}, Case{v1::FLOAT64, 2},
                                           Case{v1::FLOAT64, 31}, Case{v1::FLOAT64, kLarge},
                                           Case{v1::INT32, 1}, Case{v1::INT32, 2},
                                           Case{v1::INT32, 31}, Case{v1::INT32, kLarge}),
                         CaseName);

// The text a user reads: the registration, the int64 sum exactly, each check OK.
TEST_F(CliSharedMemoryDTypeTest, TextOfAnInt32SumPastTwoToThe31) {
  const Array a = BigInt32Array(kLarge, FreshSeed());
  __extension__ __int128 sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += a.Int(i);
  const InputFile input = WriteInput(a);
  const CliRun run =
      Cli(absl::StrCat("reduce --shared-memory --verify --op=sum,max,std --ddof=1 ", input.path));
  std::remove(input.path.c_str());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr(absl::StrCat("shared memory: /gpureduce-", run.pid, "-")));
  EXPECT_THAT(run.out, HasSubstr(absl::StrCat(", ", 4 * kLarge, " bytes, registered as ")));
  EXPECT_THAT(run.out,
              HasSubstr(absl::StrCat("result: sum = ", static_cast<int64_t>(sum), " (int64)\n")));
  EXPECT_THAT(run.out, HasSubstr("(1000003 int32 values, "));
  EXPECT_THAT(run.out, HasSubstr("(float64)\n"));
  EXPECT_THAT(run.out, HasSubstr("by reference to shared memory region gpureduce-"));
  EXPECT_EQ(std::vector<std::string>(absl::StrSplit(run.out, ": OK\n")).size(), 4u) << run.out;
  ExpectNothingLeft(run);
}

// What still cannot be lent is refused before anything is made, saying why.
TEST_F(CliSharedMemoryDTypeTest, MisuseIsRefusedPrecisely) {
  const Array odd{v1::BFLOAT16, std::string(5, '\x01')};  // two and a half elements
  const InputFile input = WriteInput(odd);
  const struct {
    std::string args;
    std::string says;
  } cases[] = {
      // each after "--shared-memory"
      {" --dtype=float64 --chunk-size=4B --random=10",
       "--chunk-size must be at least one float64 element (8 bytes)"},
      {" --dtype=int32 --streams=2 --random=10",
       "--streams and --shared-memory exclude each other"},
      {" --dtype=float16 --values --random=10", "--values and --shared-memory exclude each other"},
      {" --ddof=-1 --op=var --random=10", "--ddof -1 is not a non-negative number"},
      {"=cuda --dtype=float16 --random=10", "the CLI lends only system shared memory"},
      {absl::StrCat(" ", input.flags, " ", input.path), "which is not a multiple of 2 bytes"},
  };
  for (const auto& [args, says] : cases) {
    SCOPED_TRACE(args);
    const CliRun run = Cli(absl::StrCat("reduce --shared-memory", args));
    EXPECT_EQ(run.exit_code, 2);
    EXPECT_THAT(run.err, HasSubstr(says));
    EXPECT_THAT(run.out, IsEmpty());
    ExpectNothingLeft(run);
  }
  std::remove(input.path.c_str());
}

}  // namespace
}  // namespace gpureduce::testing
