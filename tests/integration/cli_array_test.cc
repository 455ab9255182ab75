// `gpureduce reduce` with array requests (issue 23) against the real server, as a user runs it:
// --random and .npy input reduced along axes (in one message, streamed, and by reference to
// shared memory) and over segments, the printed, JSON and --output .npy results checked against
// float64 references computed here; the refusals' messages; gpureduce-load with a layout.

#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "client/input/random_source.h"
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
using ::testing::Not;

std::string ScratchPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/gpureduce-cli-array-", getpid(), "-", name);
}

template <typename T>
std::string WriteNpy(const std::string& name, const std::string& descr, const std::string& shape,
                     const std::vector<T>& data) {
  const std::string path = ScratchPath(name);
  std::ofstream out(path, std::ios::binary);
  out << NpyHeaderBytes(1, NpyDict(descr, shape));
  out.write(reinterpret_cast<const char*>(data.data()),
            static_cast<std::streamsize>(data.size() * sizeof(T)));
  return path;
}

// A float32 result from JSON (a number, or "NaN"/"Infinity" as the CLI writes them).
double Number(const nlohmann::json& value) {
  if (value.is_string()) return value == "NaN" ? NAN : value == "Infinity" ? INFINITY : -INFINITY;
  return value.get<double>();
}

// A float32 answer: the float64 reduction rounded once, so within half a float32 unit of the
// reference, plus the reference's own rounding against sum(|x|).
void ExpectFloat32Sum(double got, double reference, double abs_sum, const std::string& where) {
  EXPECT_LE(std::fabs(got - reference), 1e-12 * abs_sum + std::fabs(reference) * 0x1p-23)
      << where << ": got " << got << ", reference " << reference;
}

// The header's dict and the data of a .npy file the CLI wrote (format 1.0).
struct Npy {
  std::string dict;
  std::string data;
};
Npy ReadNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) return {};
  const size_t length = static_cast<unsigned char>(bytes[8]) |
                        (static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8);
  return {bytes.substr(10, length), bytes.substr(10 + length)};
}

class CliArrayTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { shared_.Start({"--allow-shared-memory"}); }
  static void TearDownTestSuite() { shared_.Stop(); }
  void SetUp() override {
    REQUIRE_SHARED_SERVER(shared_);
    server_ = shared_.get();
  }

  CliRun Cli(const std::string& args) { return RunCli(args, server_->target()); }

  static inline SharedServer shared_;
  ServerProcess* server_ = nullptr;
};

TEST_F(CliArrayTest, RandomRowsStreamedAlongTheLastAxis) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  constexpr uint64_t kRows = 31, kColumns = 100003;  // 12.4 MB: streamed, chunks cut rows
  const CliRun run =
      Cli(absl::StrCat("reduce --random ", kRows * kColumns, " --seed ", seed, " --shape ", kRows,
                       ",", kColumns, " --axis -1 --op sum,max,argmin --json"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["array"], absl::StrCat("shape (31, 100003) along axis -1"));
  EXPECT_EQ(json["client"]["streamed"], true);
  const nlohmann::json& results = json["results"];
  ASSERT_EQ(results.size(), 3u);
  for (const nlohmann::json& result : results) {
    EXPECT_EQ(result["shape"], nlohmann::json::array({kRows}));
    ASSERT_EQ(result["values"].size(), kRows);
  }
  EXPECT_EQ(results[2]["dtype"], "int64");
  for (uint64_t r = 0; r < kRows; ++r) {
    double sum = 0, abs_sum = 0, max = -INFINITY;
    int64_t argmin = 0;
    float min = INFINITY;
    for (uint64_t c = 0; c < kColumns; ++c) {
      const float x = client::RandomSource::ValueAt(seed, r * kColumns + c);
      sum += x;
      abs_sum += std::fabs(x);
      max = std::max<double>(max, x);
      if (x < min) {
        min = x;
        argmin = static_cast<int64_t>(c);
      }
    }
    ExpectFloat32Sum(Number(results[0]["values"][r]), sum, abs_sum, absl::StrCat("sum row ", r));
    EXPECT_EQ(Number(results[1]["values"][r]), max) << r;
    EXPECT_EQ(results[2]["values"][r].get<int64_t>(), argmin) << r;
  }
}

TEST_F(CliArrayTest, NpyFileAlongOuterAndInnerAxesWrittenAsNpyAndVerified) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  constexpr uint64_t d0 = 5, d1 = 31, d2 = 1001;
  const std::vector<float> x = MixedSignData(d0 * d1 * d2, seed);
  const std::string npy = WriteNpy("cube.npy", "<f4", "(5, 31, 1001)", x);
  const std::string out = ScratchPath("out.npy");
  // The file's own shape; axes (0, 2) keep axis 1: 31 results of shape (1, 31, 1). A small
  // --chunk-size streams it in pieces that end inside rows.
  const CliRun run =
      Cli(absl::StrCat("reduce --axis 0,-1 --keepdims --op sum,mean --verify "
                       "--chunk-size 40000 --output ",
                       out, " ", npy));
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  EXPECT_THAT(run.out, HasSubstr("sum,mean of shape (5, 31, 1001) along axes (0, -1), keepdims: "
                                 "31 results each"));
  EXPECT_THAT(run.out, HasSubstr("result: sum (float32, shape (1, 31, 1)) =\n  [[[")) << run.out;
  EXPECT_THAT(run.out, HasSubstr("verify: sum client reference of all 31 elements, shape (1, 31, "
                                 "1): OK"));
  EXPECT_THAT(run.out, Not(HasSubstr("MISMATCH")));
  const std::string sum_path = ScratchPath("out.sum.npy"), mean_path = ScratchPath("out.mean.npy");
  EXPECT_THAT(run.out, HasSubstr("output: sum written to " + sum_path));
  const Npy sums = ReadNpy(sum_path), means = ReadNpy(mean_path);
  EXPECT_THAT(sums.dict, HasSubstr("'descr': '<f4', 'fortran_order': False, 'shape': (1, 31, 1)"));
  ASSERT_EQ(sums.data.size(), d1 * sizeof(float));
  ASSERT_EQ(means.data.size(), d1 * sizeof(float));
  for (uint64_t j = 0; j < d1; ++j) {
    double sum = 0, abs_sum = 0;
    for (uint64_t i = 0; i < d0; ++i) {
      for (uint64_t k = 0; k < d2; ++k) {
        sum += x[(i * d1 + j) * d2 + k];
        abs_sum += std::fabs(x[(i * d1 + j) * d2 + k]);
      }
    }
    float got_sum, got_mean;
    std::memcpy(&got_sum, sums.data.data() + j * 4, 4);
    std::memcpy(&got_mean, means.data.data() + j * 4, 4);
    ExpectFloat32Sum(got_sum, sum, abs_sum, absl::StrCat("sum ", j));
    ExpectFloat32Sum(got_mean, sum / (d0 * d2), abs_sum / (d0 * d2), absl::StrCat("mean ", j));
  }
  for (const std::string& path : {npy, sum_path, mean_path}) std::remove(path.c_str());
}

TEST_F(CliArrayTest, Float64ColumnsBySharedMemory) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  constexpr uint64_t kRows = 997, kColumns = 37;
  const std::vector<float> floats = MixedSignData(kRows * kColumns, seed);
  const std::vector<double> x(floats.begin(), floats.end());
  const std::string npy = WriteNpy("table.npy", "<f8", "(997, 37)", x);
  const CliRun run = Cli("reduce --shared-memory --axis 0 --op sum,argmax --json " + npy);
  std::remove(npy.c_str());
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const nlohmann::json json = nlohmann::json::parse(run.out);
  const nlohmann::json& results = json["results"];
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0]["dtype"], "float64");
  ASSERT_EQ(results[0]["values"].size(), kColumns);
  for (uint64_t c = 0; c < kColumns; ++c) {
    double sum = 0, abs_sum = 0;
    int64_t argmax = 0;
    for (uint64_t r = 0; r < kRows; ++r) {
      sum += x[r * kColumns + c];
      abs_sum += std::fabs(x[r * kColumns + c]);
      if (x[r * kColumns + c] > x[argmax * kColumns + c]) argmax = static_cast<int64_t>(r);
    }
    EXPECT_LE(std::fabs(Number(results[0]["values"][c]) - sum), 1e-12 * abs_sum) << c;
    EXPECT_EQ(results[1]["values"][c].get<int64_t>(), argmax) << c;
  }
}

TEST_F(CliArrayTest, SegmentsIncludingAnEmptyOne) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  const std::vector<uint64_t> lengths = {5, 0, 1977, 17, 1};
  const std::string file = ScratchPath("lengths.txt");
  std::ofstream(file) << "5 0\n1977,17\n1\n";
  for (const std::string& segments : {std::string("5,0,1977,17,1"), "@" + file}) {
    const CliRun run = Cli(absl::StrCat("reduce --random 2000 --seed ", seed, " --segments ",
                                        segments, " --op sum,prod,nanmean --json --verify"));
    ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
    const nlohmann::json json = nlohmann::json::parse(run.out);
    EXPECT_EQ(json["array"], "5 segments");
    const nlohmann::json& results = json["results"];
    ASSERT_EQ(results.size(), 3u);
    for (const nlohmann::json& check : json["verify_results"]) EXPECT_EQ(check["ok"], true);
    uint64_t first = 0;
    for (size_t s = 0; s < lengths.size(); ++s) {
      double sum = 0, abs_sum = 0;
      for (uint64_t i = first; i < first + lengths[s]; ++i) {
        const float x = client::RandomSource::ValueAt(seed, i);
        sum += x;
        abs_sum += std::fabs(x);
      }
      ExpectFloat32Sum(Number(results[0]["values"][s]), sum, abs_sum, absl::StrCat("sum ", s));
      if (lengths[s] > 0) {
        ExpectFloat32Sum(Number(results[2]["values"][s]), sum / lengths[s], abs_sum / lengths[s],
                         absl::StrCat("nanmean ", s));
      }
      first += lengths[s];
    }
    EXPECT_EQ(Number(results[1]["values"][1]), 1) << "the empty segment's product";
    EXPECT_TRUE(std::isnan(Number(results[2]["values"][1]))) << "its nanmean, as NumPy's";
  }
  std::remove(file.c_str());
  // MIN has no identity: the server refuses the empty segment before reading data.
  const CliRun min = Cli("reduce --random 2000 --segments 5,0,1995 --op min");
  EXPECT_EQ(min.exit_code, 1);
  EXPECT_THAT(min.err, HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(min.err, HasSubstr("segments[1] is empty"));
}

TEST_F(CliArrayTest, BadAxesAndCombinationsAreUsageErrors) {
  const struct {
    std::string args;
    std::string message;
  } cases[] = {
      {"--random 12 --shape 3,4 --axis 2",
       "--axis 2 is out of bounds for an array of dimension 2 (shape (3, 4): its axes are -2..1)"},
      {"--random 12 --shape 3,4 --axis -3", "--axis -3 is out of bounds"},
      {"--random 12 --shape 3,4 --axis 1,-1", "--axis names axis 1 twice (1 and -1)"},
      {"--random 12 --axis 1", "--axis needs a shape: random (12 floats"},
      {"--random 12 --shape 3,5 --axis 1", "--shape (3, 5) holds 15 elements, but random"},
      {"--random 12 --shape 3,4 --segments 6,6", "--shape and --segments exclude each other"},
      {"--random 12 --segments 6,5", "--segments add up to 11 elements"},
      {"--random 12 --shape 3,4 --axis 0 --streams 2", "an array request"},
      {"--random 24 --shape 2,3,4 --axis 0,1 --op argmin", "argmin reduces one axis or every"},
      {"--random 12 --shape 3,x", "--shape: 'x' is not a length"},
  };
  for (const auto& c : cases) {
    const CliRun run = Cli("reduce " + c.args);
    EXPECT_EQ(run.exit_code, 2) << c.args << "\n" << run.out;
    EXPECT_THAT(run.err, HasSubstr(c.message)) << c.args;
  }
  // Text has no length up front: the server finds the shape does not fit.
  const std::string text = ScratchPath("twelve.txt");
  std::ofstream(text) << "1 2 3 4 5 6 7 8 9 10 11 12\n";
  const CliRun short_input = Cli("reduce --shape 3,5 --axis 1 " + text);
  EXPECT_EQ(short_input.exit_code, 1);
  EXPECT_THAT(short_input.err, HasSubstr("ended after 12 elements"));
  const CliRun fits = Cli("reduce --shape 3,4 --axis 1 --op sum,argmax " + text);
  std::remove(text.c_str());
  ASSERT_EQ(fits.exit_code, 0) << fits.err;
  EXPECT_THAT(fits.out, HasSubstr("result: sum (float32, shape (3,)) = [10, 26, 42]\n"));
  EXPECT_THAT(fits.out, HasSubstr("result: argmax (int64 indices, shape (3,)) = [3, 3, 3]\n"));
}

TEST_F(CliArrayTest, LoadGeneratorChecksEveryElement) {
  for (const std::string& layout :
       {std::string("--floats 100035 --shape 15,6669 --axis 0"),
        std::string("--bytes 400140 --chunk-size 65536 --segments 7")}) {
    const CliRun run = [&] {
      const std::string out = ScratchPath("load.out");
      const std::string command =
          absl::StrCat(LoadBinary(), " --target=", server_->target(), " ", layout,
                       " --op sum,max,argmin --requests 20 --warmup 0s > ", out, " 2>&1");
      const int status = std::system(command.c_str());
      CliRun result{WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadWholeFile(out), "", 0};
      std::remove(out.c_str());
      return result;
    }();
    EXPECT_EQ(run.exit_code, 0) << layout << "\n" << run.out;
    EXPECT_THAT(run.out, HasSubstr("(20 ok, 0 errors, 0 wrong")) << run.out;
    EXPECT_THAT(run.out, HasSubstr(layout.find("shape") != std::string::npos
                                       ? "each as shape (15, 6669) along axis 0: 6669 results"
                                       : "each as 7 segments: 7 results per op"));
  }
}

}  // namespace
}  // namespace gpureduce::testing
