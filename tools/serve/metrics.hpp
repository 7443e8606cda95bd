// Metrics: the registry behind `stoker serve`'s GET /metrics, rendered in
// Prometheus's text exposition format, version 0.0.4 (serve it with
// metrics_content_type).
//
// A family is a name, a help text, a type (counter, gauge or histogram) and
// label names; its series are keyed by label values, given in the order of
// the label names. A family without labels has its one series from the
// moment it is registered (a counter reads 0 before anything happened,
// which is what rate() needs); a labelled series appears at its first use.
//
// Promises:
// - Thread safety: every member may be called from any thread; each family
//   has its own lock, so observing into one does not wait for another, and
//   render() sees each family as it was at one instant.
// - Ordering: families render in the order they were registered, series in
//   the lexicographic order of their label values, so two renders of the
//   same state are the same text.
// - Failure: what only a programmer can get wrong throws
//   std::invalid_argument naming the offending value: a name or label name
//   outside Prometheus's rules (names [a-zA-Z_:][a-zA-Z0-9_:]*, label names
//   [a-zA-Z_][a-zA-Z0-9_]*, none starting with "__"), a label name given
//   twice or one of those the format reserves ("le" for histogram buckets,
//   "quantile" for summaries), an empty help text, a counter whose name
//   does not end in "_total" (or another type's that does), a name ending
//   in "_bucket", "_sum" or "_count" (a histogram's samples are named so),
//   a name already registered, bucket bounds not finite and strictly
//   increasing, a counter decremented, and label values not matching the
//   label names in number. Label values are data: any text is rendered,
//   invalid UTF-8 as U+FFFD (Prometheus rejects a scrape that is not UTF-8).
//   promtool's lint checks naming conventions beyond these (base units, no
//   camelCase); test/tools/serve's promtool test holds a sample to them.
// - Lifetime: the references that counter(), gauge() and histogram()
//   return stay valid as long as the Metrics object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace stoker::serve {

// The Content-Type of what Metrics::render() returns.
inline constexpr std::string_view metrics_content_type = "text/plain; version=0.0.4; charset=utf-8";

// Label values of one series, in the order of its family's label names.
using LabelValues = std::vector<std::string>;

// `count` bucket bounds start, start * factor, start * factor^2, ...
// (start > 0, factor > 1, count >= 1, else std::invalid_argument).
std::vector<double> exponential_buckets(double start, double factor, std::size_t count);

namespace detail {

// What the three kinds of family share: the header lines and the checks on
// label values. Reached only through Counter, Gauge and Histogram.
class MetricFamily {
 public:
  virtual ~MetricFamily() = default;
  MetricFamily(const MetricFamily&) = delete;
  MetricFamily& operator=(const MetricFamily&) = delete;

  const std::string& name() const noexcept { return name_; }
  // Appends the family's # HELP and # TYPE lines and its samples to `out`.
  void render(std::string& out) const;

 protected:
  MetricFamily(std::string name, std::string help, std::string_view type,
               std::vector<std::string> label_names);
  bool labelled() const noexcept { return !label_names_.empty(); }
  // Throws std::invalid_argument when `values` does not match the label names.
  void check(const LabelValues& values) const;
  // One sample line, `sample_name{labels} value`, with an optional label
  // after the family's own (a histogram bucket's le).
  void append_sample(std::string& out, std::string_view sample_name, const LabelValues& values,
                     double value, std::string_view extra_label = {}, double extra_value = 0) const;
  virtual void render_samples(std::string& out) const = 0;  // called with mutex_ held

  mutable std::mutex mutex_;

 private:
  std::string name_, help_;
  std::string_view type_;
  std::vector<std::string> label_names_;
};

}  // namespace detail

// Counts that only go up (requests, proofs, bytes moved).
class Counter final : public detail::MetricFamily {
 public:
  // `by` must be >= 0 (0 makes the series appear with its value).
  void add(const LabelValues& values, double by = 1);

 private:
  friend class Metrics;
  Counter(std::string name, std::string help, std::vector<std::string> label_names);
  void render_samples(std::string& out) const override;
  std::map<LabelValues, double> series_;
};

// A figure that goes up and down (queue length, memory in use, per-device
// state). A figure recomputed at every scrape: clear(), then set() each
// series that exists now, so that a device or key that went away leaves no
// stale series behind.
class Gauge final : public detail::MetricFamily {
 public:
  void set(const LabelValues& values, double value);
  void add(const LabelValues& values, double by);  // by may be negative
  void clear();                                    // drops every series

 private:
  friend class Metrics;
  Gauge(std::string name, std::string help, std::vector<std::string> label_names);
  void render_samples(std::string& out) const override;
  std::map<LabelValues, double> series_;
};

// A distribution over fixed buckets (latencies in seconds, sizes in bytes).
// An observation counts in every bucket whose upper bound is >= the value,
// and in +Inf; NaN counts only in +Inf (and makes _sum NaN).
class Histogram final : public detail::MetricFamily {
 public:
  void observe(const LabelValues& values, double value);

 private:
  friend class Metrics;
  Histogram(std::string name, std::string help, std::vector<std::string> label_names,
            std::vector<double> upper_bounds);
  void render_samples(std::string& out) const override;
  struct Series {
    std::vector<std::uint64_t> counts;  // per finite bucket, not cumulative
    std::uint64_t count = 0;
    double sum = 0;
  };
  std::vector<double> upper_bounds_;  // finite, strictly increasing; +Inf is implicit
  std::map<LabelValues, Series> series_;
};

class Metrics {
 public:
  Metrics() = default;
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  Counter& counter(std::string name, std::string help, std::vector<std::string> label_names = {});
  Gauge& gauge(std::string name, std::string help, std::vector<std::string> label_names = {});
  // `upper_bounds`: finite and strictly increasing; the +Inf bucket is added.
  Histogram& histogram(std::string name, std::string help, std::vector<std::string> label_names,
                       std::vector<double> upper_bounds);

  // Every family in the text format, one # HELP and # TYPE line each, even
  // when it has no series; ends with a newline unless there is no family.
  std::string render() const;

 private:
  // Keeps `family` unless its name is registered already.
  template <class F>
  F& add(std::unique_ptr<F> family);

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<detail::MetricFamily>> families_;
};

}  // namespace stoker::serve
