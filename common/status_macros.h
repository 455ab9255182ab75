#pragma once

// absl::Status propagation helpers (Debian's abseil ships no status macros).

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define GPUREDUCE_CONCAT_INNER_(a, b) a##b
#define GPUREDUCE_CONCAT_(a, b) GPUREDUCE_CONCAT_INNER_(a, b)

// Returns the status of `expr` from the enclosing function when it is not OK.
#define RETURN_IF_ERROR(expr)                                 \
  do {                                                        \
    if (absl::Status _gr_status = (expr); !_gr_status.ok()) { \
      return _gr_status;                                      \
    }                                                         \
  } while (false)

// Evaluates `rexpr` (an absl::StatusOr<T>); returns its status when not OK, otherwise moves its
// value into `lhs`, which may be a declaration (`auto x`).
#define ASSIGN_OR_RETURN(lhs, rexpr) \
  ASSIGN_OR_RETURN_IMPL_(GPUREDUCE_CONCAT_(_gr_statusor_, __LINE__), lhs, rexpr)

#define ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                           \
  if (!statusor.ok()) {                              \
    return std::move(statusor).status();             \
  }                                                  \
  lhs = std::move(statusor).value()
