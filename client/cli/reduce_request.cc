#include "client/cli/reduce_request.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "client/array_reference.h"
#include "client/cli/npy_output.h"
#include "client/typed_spec.h"
#include "common/reduction/op.h"
#include "common/reduction/op_name.h"
#include "wire/op_mapping.h"

namespace gpureduce::cli {
namespace {

// --verify's relative error allowed in float results (against sum|x|, and so on), as the float32
// ops' check allows.
constexpr double kVerifyTolerance = 1e-6;

}  // namespace

absl::StatusOr<size_t> ElementsPerChunk(uint64_t chunk_bytes, DType dtype) {
  const size_t element_size = DTypeSize(dtype);
  if (chunk_bytes < element_size) {
    return absl::InvalidArgumentError(absl::StrCat("--chunk-size must be at least one ",
                                                   DTypeName(dtype), " element (", element_size,
                                                   " bytes)"));
  }
  return chunk_bytes / element_size;
}

bool IsTyped(DType dtype, const std::vector<v1::Op>& ops, double ddof) {
  if (dtype != DType::kFloat32 || ops.size() != 1 || ddof != 0) return true;
  const std::optional<Op> op = wire::FromProto(ops.front());
  return !op.has_value() || !IsClassicOp(*op);
}

v1::ReduceSpec MakeReduceSpec(const RequestSettings& settings,
                              std::optional<uint64_t> expected_count) {
  v1::ReduceSpec spec;
  client::SetOpsAndDType(settings.ops, settings.dtype, settings.ddof, spec);
  spec.set_kernel(settings.kernel);
  spec.set_block_size(settings.block_size);
  if (settings.device >= 0) spec.set_device(static_cast<int32_t>(settings.device));
  if (expected_count.has_value()) spec.set_expected_count(*expected_count);
  client::SetArrayLayout(settings.layout, spec);
  return spec;
}

References::References(bool verify, const RequestSettings& settings) : settings(settings) {
  if (!verify) return;
  if (settings.layout.array()) {
    array_input.emplace();
  } else if (IsTyped(settings.dtype, settings.ops, settings.ddof)) {
    typed.emplace(settings.ops.front(), settings.dtype, settings.ddof);
  } else {
    classic.emplace(settings.ops.front());
  }
}

void References::Add(absl::Span<const char> bytes) {
  if (classic.has_value()) {
    classic->Add(absl::MakeConstSpan(reinterpret_cast<const float*>(bytes.data()),
                                     bytes.size() / sizeof(float)));
  }
  if (typed.has_value()) typed->AddBytes(absl::string_view(bytes.data(), bytes.size()));
  if (array_input.has_value()) array_input->append(bytes.data(), bytes.size());
}

std::optional<Verification> References::ClassicVerification() const {
  if (!classic.has_value()) return std::nullopt;
  return Verification{classic->value(), classic->index(), classic->scale()};
}

std::vector<ResultCheck> References::Checks(const std::vector<v1::Op>& ops,
                                            const v1::ReduceResponse& response) const {
  std::vector<ResultCheck> checks;
  if (array_input.has_value()) return ArrayChecks(ops, response);
  for (size_t i = 0; typed.has_value() && i < ops.size(); ++i) {
    const client::TypedReference::Answer answer = typed->answer(ops[i]);
    ResultCheck check;
    check.op = ops[i];
    check.reference = answer.index >= 0 ? absl::StrCat(answer.index)
                                        : FormatTypedValue(answer.dtype, answer.value,
                                                           answer.int_value, answer.integer);
    if (answer.overflow) absl::StrAppend(&check.reference, " (overflow)");
    check.problem = static_cast<int>(i) < response.results_size()
                        ? client::CheckOpResult(response.results(static_cast<int>(i)), ops[i],
                                                answer, kVerifyTolerance)
                        : "the server sent no typed result for it (a server older than dtypes?)";
    checks.push_back(std::move(check));
  }
  return checks;
}

std::vector<ResultCheck> References::ArrayChecks(const std::vector<v1::Op>& ops,
                                                 const v1::ReduceResponse& response) const {
  const client::ArrayAnswers answers = client::ComputeArrayAnswers(
      settings.layout, ops, settings.dtype, settings.ddof, {absl::string_view(*array_input)});
  const std::vector<uint64_t> shape = client::ResultShape(settings.layout);
  std::vector<ResultCheck> checks;
  for (size_t i = 0; i < ops.size(); ++i) {
    ResultCheck check;
    check.op = ops[i];
    check.reference =
        absl::StrCat("of all ", answers[i].size(), " elements, shape ", client::ShapeText(shape));
    check.problem = static_cast<int>(i) < response.results_size()
                        ? client::CheckArrayResult(response.results(static_cast<int>(i)), ops[i],
                                                   shape, answers[i], kVerifyTolerance)
                        : "the server sent no result for it";
    checks.push_back(std::move(check));
  }
  return checks;
}

int PrintReduceAnswer(const char* command, ConnectionOptions& connection, const std::string& output,
                      v1::Op first, const v1::ReduceResponse& response, ClientSide& client,
                      const std::optional<Verification>& verification,
                      const std::vector<ResultCheck>& checks) {
  if (!client.array.empty()) {
    // A server older than array requests ignores the layout and answers a full reduction.
    const bool arrays =
        response.results_size() > 0 &&
        std::all_of(response.results().begin(), response.results().end(),
                    [](const v1::OpResult& r) { return r.shape_size() > 0 || !r.data().empty(); });
    if (!arrays) {
      std::fprintf(stderr,
                   "gpureduce %s: the server answered without result arrays: it predates array "
                   "requests (--shape, --axis, --segments; issue 23), and what it reduced is the "
                   "whole input\n",
                   command);
      return kExitServerRefused;
    }
  }
  absl::Status written;
  if (!output.empty()) {
    absl::StatusOr<std::vector<std::string>> paths = WriteResultFiles(output, response);
    if (paths.ok()) {
      client.outputs = *std::move(paths);
    } else {
      written = paths.status();
    }
  }
  const int exit = PrintAnswer(command, connection,
                               FormatReduceText(first, response, client, verification, checks),
                               FormatReduceJson(first, response, client, verification, checks));
  if (!written.ok()) return ReportUsageError(command, std::string(written.message()));
  return exit;
}

}  // namespace gpureduce::cli
