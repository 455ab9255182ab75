#pragma once

// Reading one series out of what a prometheus-cpp collectable holds now, for the metrics tests.

#include <map>
#include <optional>
#include <string>

#include "prometheus/client_metric.h"
#include "prometheus/collectable.h"

namespace gpureduce::testing {

using Labels = std::map<std::string, std::string>;

// The series of family `name` with exactly `labels`, or nullopt when there is none.
std::optional<prometheus::ClientMetric> FindSeries(const prometheus::Collectable& collectable,
                                                   const std::string& name,
                                                   const Labels& labels = {});

// A counter's or gauge's value; -1 when the series is absent.
double SeriesValue(const prometheus::Collectable& collectable, const std::string& name,
                   const Labels& labels = {});

// The sum of the counters and gauges of family `name` whose labels include `labels`.
double SumOfSeries(const prometheus::Collectable& collectable, const std::string& name,
                   const Labels& labels = {});

// A histogram's observation count; -1 when the series is absent.
double SampleCount(const prometheus::Collectable& collectable, const std::string& name,
                   const Labels& labels = {});

// The families' exposition text, as a scrape of /metrics returns it.
std::string ExpositionText(const prometheus::Collectable& collectable);

}  // namespace gpureduce::testing
