#include "client/cli/reduce_output.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/cli/array_output.h"
#include "client/cli/json.h"
#include "wire/op_mapping.h"

namespace gpureduce::cli {
namespace {

double Millis(double micros) { return micros / 1e3; }

// GB/s of the payload over the client's wall time.
double ClientGbps(const v1::ReduceResponse& response, const ClientSide& client) {
  const double seconds = absl::ToDoubleSeconds(client.wall);
  return seconds > 0 ? response.timing().bytes() / seconds / 1e9 : 0;
}

double RelativeError(const v1::ReduceResponse& response, const Verification& check) {
  const double error = std::fabs(response.value() - check.reference);
  if (error == 0 || std::isnan(error)) return error;
  return check.scale > 0 ? error / check.scale : error;
}

// Only ARGMIN and ARGMAX answer with an index (the client's reference keeps one for MIN and MAX
// too, where the server reports -1).
bool Indexed(v1::Op op) { return op == v1::ARGMIN || op == v1::ARGMAX; }

int64_t ReferenceIndex(v1::Op op, const Verification& check) {
  return Indexed(op) ? check.reference_index : -1;
}

bool Agrees(v1::Op op, const v1::ReduceResponse& response, const Verification& check) {
  if (std::isnan(check.reference)) return std::isnan(response.value());
  if (response.index() != ReferenceIndex(op, check)) return false;
  if (std::isinf(check.reference)) return response.value() == check.reference;
  return RelativeError(response, check) <= 1e-6;
}

std::string DTypeText(v1::DType dtype) {
  std::string name = v1::DType_Name(dtype == v1::DTYPE_UNSPECIFIED ? v1::FLOAT32 : dtype);
  return absl::AsciiStrToLower(name);
}

bool IntegerDType(v1::DType dtype) { return dtype == v1::INT32 || dtype == v1::INT64; }

// The elements of an array result: the product of its shape (1 for a 0-d array).
uint64_t ArrayElements(const v1::OpResult& result) {
  uint64_t elements = 1;
  for (const uint64_t extent : result.shape()) elements *= extent;
  return elements;
}

// "sum,max": the ops answered (`op` when the server sent no typed results).
std::string OpsText(const v1::ReduceResponse& response, v1::Op op) {
  if (response.results_size() == 0) return wire::OpName(op);
  std::vector<std::string> names;
  for (const v1::OpResult& result : response.results()) names.push_back(wire::OpName(result.op()));
  return absl::StrJoin(names, ",");
}

}  // namespace

std::string FormatTypedValue(v1::DType dtype, double value, int64_t int_value, bool integer) {
  if (integer) return absl::StrCat(int_value);
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  switch (dtype) {
    case v1::FLOAT16:
      return absl::StrFormat("%.5g", value);
    case v1::BFLOAT16:
      return absl::StrFormat("%.4g", value);
    case v1::FLOAT64:
      return absl::StrFormat("%.17g", value);
    default:
      return absl::StrFormat("%.9g", value);
  }
}

std::string FormatResultValue(const v1::OpResult& result) {
  if (result.index() >= 0) return absl::StrCat(result.index());
  return FormatTypedValue(result.dtype(), result.value(), result.int_value(),
                          IntegerDType(result.dtype()));
}

std::string FormatResultsText(const v1::ReduceResponse& response) {
  std::string out;
  for (const v1::OpResult& result : response.results()) {
    absl::StrAppend(&out, "result: ", wire::OpName(result.op()), " = ", FormatResultValue(result),
                    " (", DTypeText(result.dtype()));
    if (result.index() >= 0) {
      absl::StrAppend(
          &out, " index; element ",
          FormatTypedValue(response.dtype(), result.value(), static_cast<int64_t>(result.value()),
                           IntegerDType(response.dtype())));
    }
    if (result.overflow()) absl::StrAppend(&out, "; overflow: wrapped modulo 2^64 as NumPy does");
    absl::StrAppend(&out, ")\n");
  }
  return out;
}

std::string FormatSharedMemoryText(const SharedMemoryUse& use) {
  const double load_s = absl::ToDoubleSeconds(use.load);
  return absl::StrFormat(
      "shared memory: %s, %d bytes, registered as %s in %.3f ms (server: %.3f ms to map and "
      "pin); input loaded in %.3f ms (%.2f GB/s)\n",
      use.key, use.bytes, use.region, absl::ToDoubleMilliseconds(use.client_register),
      Millis(use.server_register_us), absl::ToDoubleMilliseconds(use.load),
      load_s > 0 ? use.bytes / load_s / 1e9 : 0.0);
}

std::string FormatReduceText(v1::Op op, const v1::ReduceResponse& response,
                             const ClientSide& client,
                             const std::optional<Verification>& verification,
                             const std::vector<ResultCheck>& checks) {
  const v1::Timing& t = response.timing();
  std::string out;
  if (!client.array.empty()) {
    const uint64_t results = response.results_size() == 0 ? 0 : ArrayElements(response.results(0));
    absl::StrAppendFormat(&out, "%s of %s: %d result%s each", OpsText(response, op), client.array,
                          results, results == 1 ? "" : "s");
  } else {
    out = absl::StrFormat("%s = %.17g", wire::OpName(op), response.value());
    if (response.index() >= 0) absl::StrAppendFormat(&out, " at index %d", response.index());
  }
  const bool floats = response.dtype() == v1::DTYPE_UNSPECIFIED || response.dtype() == v1::FLOAT32;
  absl::StrAppendFormat(&out, "   (%d %s, %s)\n", response.count(),
                        floats ? "floats" : absl::StrCat(DTypeText(response.dtype()), " values"),
                        client.input);
  absl::StrAppend(
      &out, client.array.empty() ? FormatResultsText(response) : FormatArrayResultsText(response));
  for (size_t i = 0; i < client.outputs.size() && i < static_cast<size_t>(response.results_size());
       ++i) {
    absl::StrAppend(&out, "output: ", wire::OpName(response.results(static_cast<int>(i)).op()),
                    " written to ", client.outputs[i], "\n");
  }
  absl::StrAppendFormat(
      &out, "kernel %s, backend %s, device %s%s\n", response.kernel(), response.backend(),
      response.device(),
      response.device_indices_size() > 1
          ? absl::StrCat(" (GPUs ", absl::StrJoin(response.device_indices(), ", "), ")")
          : std::string());
  absl::StrAppendFormat(&out,
                        "server: %.3f ms in all; compute %.3f ms (%.2f GB/s), queue %.3f ms, "
                        "h2d %.3f ms, d2h %.3f ms; %d bytes in %d chunk%s\n",
                        Millis(t.server_us()), Millis(t.kernel_us()), t.kernel_gbps(),
                        Millis(t.queue_us()), Millis(t.h2d_us()), Millis(t.d2h_us()), t.bytes(),
                        t.chunks(), t.chunks() == 1 ? "" : "s");
  const uint32_t streams = std::max<uint32_t>(1, response.streams());
  absl::StrAppendFormat(
      &out, "client: %.3f ms wall, %.2f GB/s end to end (%s)\n",
      absl::ToDoubleMilliseconds(client.wall), ClientGbps(response, client),
      client.shared_memory.has_value()
          ? absl::StrCat("by reference to shared memory region ", client.shared_memory->region)
      : !client.streamed ? "one message"
      : streams == 1     ? "streamed"
                         : absl::StrCat(streams, " streams at once",
                                    response.stream_retries() == 0
                                            ? ""
                                            : absl::StrCat("; ", response.stream_retries(),
                                                           " sent again after their server "
                                                               "went away")));
  if (verification.has_value()) {
    absl::StrAppendFormat(&out, "verify: client float64 reference %.17g", verification->reference);
    if (ReferenceIndex(op, *verification) >= 0) {
      absl::StrAppendFormat(&out, " at index %d", verification->reference_index);
    }
    absl::StrAppendFormat(&out, "; relative error %.2e: %s\n",
                          RelativeError(response, *verification),
                          Agrees(op, response, *verification) ? "OK" : "MISMATCH");
  }
  for (const ResultCheck& check : checks) {
    absl::StrAppend(
        &out, "verify: ", wire::OpName(check.op), " client reference ", check.reference, ": ",
        check.problem.empty() ? "OK" : absl::StrCat("MISMATCH (", check.problem, ")"), "\n");
  }
  return out;
}

std::string FormatReduceJson(v1::Op op, const v1::ReduceResponse& response,
                             const ClientSide& client,
                             const std::optional<Verification>& verification,
                             const std::vector<ResultCheck>& checks) {
  const v1::Timing& t = response.timing();
  Json out = {{"op", wire::OpName(op)},
              {"value", JsonNumber(response.value())},
              {"index", response.index()},
              {"count", response.count()},
              {"dtype", DTypeText(response.dtype())},
              {"kernel", response.kernel()},
              {"backend", response.backend()},
              {"device", response.device()},
              {"device_indices", std::vector<int32_t>(response.device_indices().begin(),
                                                      response.device_indices().end())},
              {"timing",
               {{"queue_us", JsonNumber(t.queue_us())},
                {"h2d_us", JsonNumber(t.h2d_us())},
                {"kernel_us", JsonNumber(t.kernel_us())},
                {"d2h_us", JsonNumber(t.d2h_us())},
                {"server_us", JsonNumber(t.server_us())},
                {"bytes", t.bytes()},
                {"chunks", t.chunks()},
                {"kernel_gbps", JsonNumber(t.kernel_gbps())},
                {"server_gbps", JsonNumber(t.server_gbps())}}},
              {"client",
               {{"wall_us", JsonNumber(absl::ToDoubleMicroseconds(client.wall))},
                {"gbps", JsonNumber(ClientGbps(response, client))},
                {"streamed", client.streamed},
                {"streams", std::max<uint32_t>(1, response.streams())},
                {"stream_retries", response.stream_retries()},
                {"input", client.input}}}};
  if (response.results_size() > 0) {
    Json results = Json::array();
    for (const v1::OpResult& result : response.results()) {
      Json one = {{"op", wire::OpName(result.op())},
                  {"dtype", DTypeText(result.dtype())},
                  {"value", JsonNumber(result.value())},
                  {"text", FormatResultValue(result)}};
      if (IntegerDType(result.dtype())) one["int_value"] = result.int_value();
      one["index"] = result.index();
      one["overflow"] = result.overflow();
      if (!client.array.empty()) {
        one["shape"] = std::vector<uint64_t>(result.shape().begin(), result.shape().end());
        one["values"] = ArrayValuesJson(result);
        one["overflow_count"] = result.overflow_count();
        if (ArrayElements(result) != 1) {  // the scalar fields hold one element only
          one.erase("value");
          one.erase("text");
          one.erase("int_value");
        }
      }
      if (results.size() < client.outputs.size()) one["file"] = client.outputs[results.size()];
      results.push_back(std::move(one));
    }
    out["results"] = std::move(results);
  }
  if (!client.array.empty()) {
    out["array"] = client.array;
    if (response.results_size() > 0 && ArrayElements(response.results(0)) != 1) {
      out.erase("value");  // the first op's answer is an array: `results` holds it
      out.erase("index");
    }
  }
  if (!checks.empty()) {
    Json verify = Json::array();
    for (const ResultCheck& check : checks) {
      verify.push_back({{"op", wire::OpName(check.op)},
                        {"reference", check.reference},
                        {"ok", check.problem.empty()},
                        {"problem", check.problem}});
    }
    out["verify_results"] = std::move(verify);
  }
  if (client.shared_memory.has_value()) {
    const SharedMemoryUse& use = *client.shared_memory;
    out["client"]["shared_memory"] = {
        {"key", use.key},
        {"region", use.region},
        {"bytes", use.bytes},
        {"load_us", JsonNumber(absl::ToDoubleMicroseconds(use.load))},
        {"register_us", JsonNumber(use.server_register_us)},
        {"client_register_us", JsonNumber(absl::ToDoubleMicroseconds(use.client_register))}};
  }
  if (verification.has_value()) {
    out["verify"] = {{"reference", JsonNumber(verification->reference)},
                     {"reference_index", ReferenceIndex(op, *verification)},
                     {"relative_error", JsonNumber(RelativeError(response, *verification))},
                     {"ok", Agrees(op, response, *verification)}};
  }
  return JsonLine(out);
}

}  // namespace gpureduce::cli
