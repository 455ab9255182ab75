#pragma once

// The CLI's --json output: nlohmann::ordered_json (members keep the order they are added in), with
// two rules of the proto3 JSON mapping the hand-written writer this replaces also kept.

#include <string>

#include "nlohmann/json.hpp"

namespace gpureduce::cli {

using Json = nlohmann::ordered_json;

// A double as JSON: NaN and infinities as the strings "NaN", "Infinity" and "-Infinity" (JSON has
// no such numbers; nlohmann would write null), and whole values that a double holds exactly
// (|x| <= 2^53) without a fraction, "1" rather than "1.0", as the CLI always printed them.
Json JsonNumber(double value);

// One line of compact JSON. Text that is not valid UTF-8 (a file name, say) is written with
// U+FFFD in place of the bad bytes instead of throwing.
std::string JsonLine(const Json& json);

}  // namespace gpureduce::cli
