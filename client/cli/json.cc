#include "client/cli/json.h"

#include <cmath>
#include <cstdint>
#include <string>

namespace gpureduce::cli {

Json JsonNumber(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  constexpr double kExactIntegers = 9007199254740992.0;          // 2^53
  const bool negative_zero = value == 0 && std::signbit(value);  // Stays a double: "-0.0".
  if (value == std::trunc(value) && std::fabs(value) <= kExactIntegers && !negative_zero) {
    return static_cast<int64_t>(value);
  }
  return value;
}

std::string JsonLine(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace gpureduce::cli
