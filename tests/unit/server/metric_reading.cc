#include "tests/unit/server/metric_reading.h"

#include "prometheus/text_serializer.h"

namespace gpureduce::testing {

namespace {

Labels LabelsOf(const prometheus::ClientMetric& metric) {
  Labels labels;
  for (const prometheus::ClientMetric::Label& label : metric.label)
    labels[label.name] = label.value;
  return labels;
}

// A series is a counter or a gauge; the other field stays 0.
double ValueOf(const prometheus::ClientMetric& metric) {
  return metric.counter.value + metric.gauge.value;
}

}  // namespace

std::optional<prometheus::ClientMetric> FindSeries(const prometheus::Collectable& collectable,
                                                   const std::string& name, const Labels& labels) {
  for (const prometheus::MetricFamily& family : collectable.Collect()) {
    if (family.name != name) continue;
    for (const prometheus::ClientMetric& metric : family.metric) {
      if (LabelsOf(metric) == labels) return metric;
    }
  }
  return std::nullopt;
}

double SeriesValue(const prometheus::Collectable& collectable, const std::string& name,
                   const Labels& labels) {
  const std::optional<prometheus::ClientMetric> metric = FindSeries(collectable, name, labels);
  return metric.has_value() ? ValueOf(*metric) : -1;
}

double SumOfSeries(const prometheus::Collectable& collectable, const std::string& name,
                   const Labels& labels) {
  double sum = 0;
  for (const prometheus::MetricFamily& family : collectable.Collect()) {
    if (family.name != name) continue;
    for (const prometheus::ClientMetric& metric : family.metric) {
      const Labels have = LabelsOf(metric);
      bool included = true;
      for (const auto& [label, value] : labels) {
        const auto found = have.find(label);
        included = included && found != have.end() && found->second == value;
      }
      if (included) sum += ValueOf(metric);
    }
  }
  return sum;
}

double SampleCount(const prometheus::Collectable& collectable, const std::string& name,
                   const Labels& labels) {
  const std::optional<prometheus::ClientMetric> metric = FindSeries(collectable, name, labels);
  return metric.has_value() ? double(metric->histogram.sample_count) : -1;
}

std::string ExpositionText(const prometheus::Collectable& collectable) {
  return prometheus::TextSerializer().Serialize(collectable.Collect());
}

}  // namespace gpureduce::testing
