#include "server/backend_factory.h"

#include "absl/strings/str_cat.h"
#include "server/cpu_backend.h"
#include "common/fmt_absl.h"
#include "spdlog/spdlog.h"

namespace gpureduce::server {

absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(const std::string& choice,
                                                       uint32_t worker_threads) {
  if (choice == "cpu") return std::make_unique<CpuBackend>(worker_threads);
  if (choice == "cuda") {
    return absl::FailedPreconditionError(
        "--backend=cuda: this build of gpureduce-server has no CUDA backend; use --backend=cpu "
        "or auto");
  }
  if (choice == "auto") {
    spdlog::warn("no CUDA backend in this build: falling back to the CPU backend");
    return std::make_unique<CpuBackend>(worker_threads);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--backend=", choice, ": expected auto, cpu or cuda"));
}

}  // namespace gpureduce::server
