// The CLI and gpureduce-load with every dtype and the new ops, against a real server: a float16
// array of 1,000,003 values and a bfloat16 one (uint16 bits, --dtype bfloat16) with every op in
// one request, an int32 array whose sum is exact past 2^31, a five-op list, and the load
// generator with --dtype float16 and an op list. Every answer is checked against a reference
// computed here, independently of the client's and the server's code (GCC's _Float16 for the
// conversions, long double and __int128 for the arithmetic).

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/load/load_runner.h"
#include "client/load/workload.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/integration/server_process.h"
#include "tests/integration/test_files.h"
#include "tests/support/npy_bytes.h"
#include "tests/support/random_data.h"

namespace gpureduce::testing {
namespace {

using ::testing::HasSubstr;

struct ToolRun {
  int exit_code;
  std::string out;
  std::string err;
};

std::string Scratch(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/gpureduce-cli-dtype-", getpid(), "-", name);
}

ToolRun Shell(const std::string& command_line) {
  const std::string out = Scratch("out"), err = Scratch("err");
  const std::string command = absl::StrCat(command_line, " >", out, " 2>", err);
  const int status = std::system(command.c_str());
  ToolRun run{WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadWholeFile(out), ReadWholeFile(err)};
  std::remove(out.c_str());
  std::remove(err.c_str());
  return run;
}

template <typename T>
std::string WriteNpy(const std::string& name, const std::string& descr, const std::vector<T>& v) {
  const std::string path = Scratch(name);
  std::ofstream out(path, std::ios::binary);
  out << NpyHeaderBytes(1, absl::StrCat("{'descr': '", descr, "', 'fortran_order': False, ",
                                        "'shape': (", v.size(), ",), }"));
  out.write(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  return path;
}

constexpr const char* kAllOps[] = {"sum",         "prod",   "min",     "max",       "mean",
                                   "sum_squares", "argmin", "argmax",  "nansum",    "nanprod",
                                   "nanmin",      "nanmax", "nanmean", "nanargmin", "nanargmax",
                                   "var",         "std",    "nanvar",  "nanstd"};

// The float answer of `op` over `x` (NaN-aware as NumPy), before rounding to the result dtype;
// for arg ops the index. Two-pass moments in long double.
struct Ref {
  double value = 0;
  int64_t index = -1;
};
Ref Reference(const std::string& op, const std::vector<double>& x, double ddof) {
  const bool skip = op.rfind("nan", 0) == 0;
  const std::string base = skip ? op.substr(3) : op;
  std::vector<double> v;
  int64_t first_nan = -1;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) {
      if (first_nan < 0) first_nan = static_cast<int64_t>(i);
    } else {
      v.push_back(x[i]);
    }
  }
  const bool nan = !skip && first_nan >= 0;
  const double kNan = std::numeric_limits<double>::quiet_NaN();
  Ref ref;
  if (base == "argmin" || base == "argmax") {
    if (nan) return Ref{kNan, first_nan};
    int64_t best = -1;
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::isnan(x[i])) continue;
      if (best < 0 || (base == "argmin" ? x[i] < x[best] : x[i] > x[best])) best = i;
    }
    return Ref{x[best], best};
  }
  if (nan) return Ref{kNan, -1};
  long double sum = 0, squares = 0, product = 1;
  int64_t exponent = 0;
  double lo = INFINITY, hi = -INFINITY;
  for (double e : v) {
    sum += e;
    squares += static_cast<long double>(e) * e;
    int k;
    product = std::frexp(product * e, &k);
    exponent += k;
    lo = std::min(lo, e);
    hi = std::max(hi, e);
  }
  const long double mean = sum / v.size();
  long double m2 = 0;
  for (double e : v) m2 += (e - mean) * (e - mean);
  const long double var = m2 / (v.size() - ddof);
  if (base == "sum") ref.value = static_cast<double>(sum);
  if (base == "prod") ref.value = static_cast<double>(std::ldexp(product, exponent));
  if (base == "min") ref.value = lo;
  if (base == "max") ref.value = hi;
  if (base == "mean") ref.value = static_cast<double>(mean);
  if (op == "sum_squares") ref.value = static_cast<double>(squares);
  if (base == "var") ref.value = static_cast<double>(var);
  if (base == "std") ref.value = static_cast<double>(std::sqrt(var));
  return ref;
}

// `value` rounded to float16 or bfloat16 by the compiler's own conversions.
double ToFloat16(double value) { return static_cast<double>(static_cast<_Float16>(value)); }
double ToBFloat16(double value) {
  const uint32_t bits = std::bit_cast<uint32_t>(static_cast<float>(value));
  if (std::isnan(value)) return value;
  const uint32_t rounded = (bits + 0x7fff + ((bits >> 16) & 1)) & 0xffff0000u;
  return std::bit_cast<float>(rounded);
}

class CliDTypeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { shared_.Start({}); }
  static void TearDownTestSuite() { shared_.Stop(); }
  void SetUp() override {
    REQUIRE_SHARED_SERVER(shared_);
    server_ = shared_.get();
  }
  ToolRun Cli(const std::string& args) {
    return Shell(absl::StrCat(CliBinary(), " reduce ", args, " --target=", server_->target()));
  }
  // Runs every op in one request over `path` and checks each typed result: the result dtype,
  // indexes exactly, floats within one unit of `round`'s last place of the reference (below the
  // dtype's normals that unit is `least_step`, its subnormals' spacing: a float16 mean of mixed
  // signs can land there).
  void CheckEveryOp(const std::string& path, const std::string& extra, const std::vector<double>& x,
                    const std::string& dtype, double (*round)(double), double ulp_at_one,
                    double least_step) {
    const ToolRun run = Cli(
        absl::StrCat(path, " ", extra, " --op=", absl::StrJoin(kAllOps, ","), " --ddof=1 --json"));
    ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
    const nlohmann::json json = nlohmann::json::parse(run.out);
    EXPECT_EQ(json["count"], x.size());
    EXPECT_EQ(json["dtype"], dtype);
    ASSERT_EQ(json["results"].size(), std::size(kAllOps));
    for (size_t i = 0; i < std::size(kAllOps); ++i) {
      const std::string op = kAllOps[i];
      SCOPED_TRACE(op);
      const nlohmann::json& result = json["results"][i];
      EXPECT_EQ(result["op"], op);
      const Ref ref = Reference(op, x, 1.0);
      if (op.find("arg") != std::string::npos) {
        EXPECT_EQ(result["dtype"], "int64");
        EXPECT_EQ(result["index"].get<int64_t>(), ref.index);
        continue;
      }
      EXPECT_EQ(result["dtype"], dtype);
      const nlohmann::json& value = result["value"];
      if (std::isnan(ref.value)) {
        EXPECT_EQ(value, "NaN");
        continue;
      }
      if (!value.is_number()) {
        EXPECT_TRUE(std::isinf(round(ref.value))) << value << " vs " << ref.value;
        continue;
      }
      const double got = value.get<double>();
      EXPECT_EQ(got, round(got)) << "not a " << dtype << " value";
      EXPECT_LE(std::fabs(got - ref.value),
                std::max(std::fabs(ref.value) * ulp_at_one, least_step) +
                    std::numeric_limits<double>::denorm_min())
          << got << " vs " << ref.value;
    }
  }

  static SharedServer shared_;
  ServerProcess* server_ = nullptr;
};

SharedServer CliDTypeTest::shared_;

TEST_F(CliDTypeTest, Float16NpyOfAMillionValuesWithEveryOp) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-2, 2);
  std::vector<_Float16> data(1000003);
  std::vector<double> x(data.size());
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<_Float16>(uniform(rng));
    x[i] = static_cast<double>(data[i]);
  }
  const std::string path = WriteNpy("half.npy", "<f2", data);
  CheckEveryOp(path, "", x, "float16", ToFloat16, 0x1p-10, 0x1p-24);
  std::remove(path.c_str());
}

TEST_F(CliDTypeTest, BFloat16AsUint16BitsWithNansAtTheEndsAndTheMiddle) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-3, 3);
  std::vector<uint16_t> bits(100003);
  std::vector<double> x(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) {
    const double value = ToBFloat16(uniform(rng));
    bits[i] = static_cast<uint16_t>(std::bit_cast<uint32_t>(static_cast<float>(value)) >> 16);
    x[i] = value;
  }
  for (const size_t at : {size_t{0}, bits.size() / 2, bits.size() - 1}) {
    bits[at] = 0x7fc0;
    x[at] = std::numeric_limits<double>::quiet_NaN();
  }
  const std::string path = WriteNpy("bf16.npy", "<u2", bits);
  CheckEveryOp(path, "--dtype=bfloat16", x, "bfloat16", ToBFloat16, 0x1p-7, 0x1p-133);
  // Without --dtype, a uint16 file is refused, naming the way to read it.
  const ToolRun plain = Cli(path);
  EXPECT_EQ(plain.exit_code, 2);
  EXPECT_THAT(plain.err, HasSubstr("only as bfloat16 bits, with --dtype bfloat16"));
  std::remove(path.c_str());
}

TEST_F(CliDTypeTest, Int32SumIsExactPastTwoToThe31AndAFiveOpListIsOneRequest) {
  std::vector<int32_t> data(300007);
  __extension__ __int128 sum = 0;
  int32_t lo = std::numeric_limits<int32_t>::max(), hi = std::numeric_limits<int32_t>::min();
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<int32_t>(2000000000 - static_cast<int64_t>(i % 1000) * 7919);
    sum += data[i];
    lo = std::min(lo, data[i]);
    hi = std::max(hi, data[i]);
  }
  const std::string path = WriteNpy("ints.npy", "<i4", data);
  const ToolRun run = Cli(absl::StrCat(path, " --op=sum,min,max,mean,std"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const int64_t exact = static_cast<int64_t>(sum);
  ASSERT_GT(exact, int64_t{1} << 31);
  EXPECT_THAT(run.out, HasSubstr(absl::StrCat("result: sum = ", exact, " (int64)\n")));
  EXPECT_THAT(run.out, HasSubstr(absl::StrCat("result: min = ", lo, " (int32)\n")));
  EXPECT_THAT(run.out, HasSubstr(absl::StrCat("result: max = ", hi, " (int32)\n")));
  EXPECT_THAT(run.out, HasSubstr("result: mean = "));
  EXPECT_THAT(run.out, HasSubstr("(float64)\nresult: std = "));
  EXPECT_THAT(run.out, HasSubstr("(300007 int32 values"));

  const ToolRun json = Cli(absl::StrCat(path, " --op=sum --json --verify"));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json parsed = nlohmann::json::parse(json.out);
  EXPECT_EQ(parsed["results"][0]["int_value"].get<int64_t>(), exact);
  EXPECT_EQ(parsed["results"][0]["overflow"], false);
  EXPECT_EQ(parsed["verify_results"][0]["ok"], true) << json.out;

  // The client cannot combine int32 parts: refused, not approximated.
  const ToolRun streams = Cli(absl::StrCat(path, " --op=sum --streams=2 --chunk-size=64KiB"));
  EXPECT_EQ(streams.exit_code, 2);
  EXPECT_THAT(streams.err, HasSubstr("over float32 only; this request (int32, --op sum)"));
  std::remove(path.c_str());
}

TEST_F(CliDTypeTest, RandomFloat64StreamedInOddChunksVerifies) {
  const ToolRun run =
      Cli("--random=200003 --dtype=float64 --op=sum,var,nanstd,argmin --verify "
          "--chunk-size=1000B --ddof=1");
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  EXPECT_THAT(run.out, HasSubstr("verify: sum client reference"));
  EXPECT_THAT(run.out, ::testing::Not(HasSubstr("MISMATCH")));
  EXPECT_THAT(run.out, HasSubstr("(float64)"));
}

TEST_F(CliDTypeTest, LoadGeneratorWithFloat16AndAnOpList) {
  const ToolRun run =
      Shell(absl::StrCat(LoadBinary(), " --target=", server_->target(),
                         " --dtype=float16 --op=sum,min,max,mean,std --floats=100003 "
                         "--duration=1s --warmup=200ms --concurrency=2"));
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("op sum,min,max,mean,std, dtype float16"));

  client::WorkloadOptions work;
  work.ops = {v1::SUM, v1::NANMAX, v1::VAR, v1::ARGMIN};
  work.dtype = DType::kBFloat16;
  work.ddof = 1;
  work.stream_bytes = 2 * 300001;
  work.chunk_bytes = 2 * 65536;
  absl::StatusOr<client::Workload> workload = client::Workload::Make(work);
  ASSERT_TRUE(workload.ok()) << workload.status();
  client::LoadOptions load;
  load.target = server_->target();
  load.concurrency = 2;
  load.requests = 8;
  load.duration = absl::ZeroDuration();
  load.warmup = absl::ZeroDuration();
  absl::StatusOr<client::LoadResult> result = client::RunLoad(load, *workload);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->ok, 8u) << result->first_error << result->first_wrong;
  EXPECT_EQ(result->wrong, 0u) << result->first_wrong;
  EXPECT_EQ(result->bytes, 8 * work.stream_bytes);
}

}  // namespace
}  // namespace gpureduce::testing
