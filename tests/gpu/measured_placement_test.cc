// `auto` by measured costs (--auto-cpu-below=measured, the default): the server logs where each
// size of a message goes, and requests of those sizes run there, with right answers. Without a
// GPU the server cannot start its CUDA backend and the test skips with the reason.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/byte_size.h"
#include "gtest/gtest.h"
#include "tests/integration/server_process.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"

namespace gpureduce::testing {
namespace {

using gpureduce::Op;

constexpr char kMessageLine[] = "`auto` requests of a message's bytes: ";

// The log's placements: "...GB/s: the CPU, a GPU from 16MiB (up to 1GiB); streams of unknown
// length as the CPU" read as (from bytes, reader) pairs and the streams' reader.
struct LoggedPlacement {
  std::vector<std::pair<uint64_t, std::string>> from;
  std::string unknown_length;

  // The reader of `bytes`, or "" where it lies between two powers of two the log tells apart.
  std::string At(uint64_t bytes) const {
    std::string below, above;
    for (const auto& [start, reader] : from) {
      if (start <= bytes) below = reader;
      if (start <= 2 * bytes) above = reader;
    }
    return below == above ? below : "";
  }
};

absl::StatusOr<LoggedPlacement> ReadPlacement(const std::string& log) {
  const size_t line = log.find(kMessageLine);
  if (line == std::string::npos) return absl::NotFoundError("no measured placement logged");
  const std::string text = log.substr(line, log.find('\n', line) - line);
  const size_t start = text.find("GB/s: ", text.find("a GPU")) + 6;
  const size_t end = text.find(" (up to ");
  const size_t streams = text.find("streams of unknown length as ");
  if (start < 6 || end == std::string::npos || streams == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("unexpected line: ", text));
  }
  LoggedPlacement placement;
  placement.unknown_length = text.substr(streams + 29);
  for (absl::string_view part : absl::StrSplit(text.substr(start, end - start), ", ")) {
    const size_t from = part.find(" from ");
    if (from == absl::string_view::npos) {
      placement.from.push_back({0, std::string(part)});
      continue;
    }
    absl::StatusOr<uint64_t> bytes = ParseByteSize(part.substr(from + 6));
    if (!bytes.ok()) return bytes.status();
    placement.from.push_back({*bytes, std::string(part.substr(0, from))});
  }
  return placement;
}

std::string BackendOf(const std::string& reader) { return reader == "the CPU" ? "cpu" : "cuda"; }

TEST(MeasuredPlacementTest, AutoRequestsRunWhereTheServerLoggedTheyEndFirst) {
  auto server = ServerProcess::Start({"--auto-cpu-below=measured"}, true, "cuda");
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  const absl::StatusOr<LoggedPlacement> placement = ReadPlacement((*server)->Log());
  ASSERT_TRUE(placement.ok()) << placement.status() << "\n" << (*server)->Log();
  ASSERT_FALSE(placement->from.empty());
  std::unique_ptr<client::ReducerClient> reducer = (*server)->Connect();
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  int checked = 0;
  // Up to the default unary limit (4 MiB).
  for (const size_t n : {size_t{1}, size_t{31}, size_t{65537}, size_t{1000003}}) {
    const std::string reader = placement->At(n * sizeof(float));
    if (reader.empty()) continue;  // at a crossover: either may win
    const std::vector<float> data = MixedSignData(n, seed + n);
    for (const Op op : {Op::kSum, Op::kArgMin}) {
      v1::ReduceSpec spec;
      spec.set_op(static_cast<v1::Op>(op));
      const absl::StatusOr<v1::ReduceResponse> got =
          reducer->Reduce(spec, absl::MakeConstSpan(data));
      ASSERT_TRUE(got.ok()) << n << ": " << got.status();
      EXPECT_EQ(
          CheckAgainstReference(op, ComputeReference(op, data), got->value(), got->index(), 1e-9),
          "")
          << n;
      EXPECT_EQ(got->backend(), BackendOf(reader)) << n << " floats: the log says " << reader;
      ++checked;
    }
  }
  EXPECT_GE(checked, 6) << "most sizes lie off the crossover";
  // A stream that declares no length goes as the log says streams of unknown length go.
  const std::vector<float> data = MixedSignData(300007, seed);
  v1::ReduceSpec spec;
  spec.set_op(v1::SUM);
  const absl::StatusOr<v1::ReduceResponse> streamed = StreamFloats(*reducer, spec, data, 65536);
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  EXPECT_EQ(CheckAgainstReference(Op::kSum, ComputeReference(Op::kSum, data), streamed->value(),
                                  streamed->index(), 1e-9),
            "");
  EXPECT_EQ(streamed->backend(), BackendOf(placement->unknown_length));
}

}  // namespace
}  // namespace gpureduce::testing
