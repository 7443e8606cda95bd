#include "tools/serve/metrics.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

namespace stoker::serve {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool is_letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

bool valid_metric_name(std::string_view s) {
  if (s.empty() || !(is_letter(s[0]) || s[0] == ':')) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return is_letter(c) || is_digit(c) || c == ':'; });
}

bool valid_label_name(std::string_view s) {
  if (s.empty() || !is_letter(s[0])) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return is_letter(c) || is_digit(c); });
}

// The length of the well-formed UTF-8 sequence at s[i], 0 when there is
// none (a stray continuation byte, an overlong form, a surrogate, a code
// point past U+10FFFF, or a sequence cut short).
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size() || byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

// Appends `text` escaped as the format asks: backslash and newline always,
// the double quote inside label values; bytes that are not UTF-8 as U+FFFD.
void append_escaped(std::string& out, std::string_view text, bool label_value) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_sequence(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    const char c = text[i];
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && label_value) {
      out += "\\\"";
    } else {
      out.append(text, i, n);
    }
    i += n;
  }
}

// Prometheus reads values with Go's ParseFloat: integers print as integers
// while a double holds them exactly (up to 2^53), anything else as the
// shortest text that reads back as the same double.
void append_value(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
    return;
  }
  if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
    return;
  }
  char buf[32];
  std::to_chars_result r;
  if (v == std::trunc(v) && std::fabs(v) <= 9007199254740992.0) {
    r = std::to_chars(buf, buf + sizeof buf, static_cast<std::int64_t>(v));
  } else {
    r = std::to_chars(buf, buf + sizeof buf, v);
  }
  out.append(buf, r.ptr);
}

std::string value_text(double v) {
  std::string s;
  append_value(s, v);
  return s;
}

}  // namespace

std::vector<double> exponential_buckets(double start, double factor, std::size_t count) {
  if (!(start > 0) || !(factor > 1) || count == 0 || !std::isfinite(start) ||
      !std::isfinite(factor)) {
    throw std::invalid_argument(
        "exponential_buckets needs start > 0, factor > 1 and count >= 1, not " + value_text(start) +
        ", " + value_text(factor) + ", " + std::to_string(count));
  }
  std::vector<double> bounds(count);
  for (std::size_t i = 0; i < count; ++i, start *= factor) bounds[i] = start;
  return bounds;
}

namespace detail {

MetricFamily::MetricFamily(std::string name, std::string help, std::string_view type,
                           std::vector<std::string> label_names)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(type),
      label_names_(std::move(label_names)) {
  if (!valid_metric_name(name_) || name_.starts_with("__")) {
    throw std::invalid_argument("metric name '" + name_ +
                                "' is not [a-zA-Z_:][a-zA-Z0-9_:]* or starts with '__'");
  }
  if (help_.empty()) throw std::invalid_argument("metric " + name_ + " has no help text");
  const bool counter = type_ == "counter";
  if (counter != ends_with(name_, "_total")) {
    throw std::invalid_argument(
        "metric " + name_ + ": " +
        (counter ? "a counter's name ends in _total" : "only a counter's name ends in _total"));
  }
  for (std::string_view suffix : {"_bucket", "_sum", "_count"}) {
    if (ends_with(name_, suffix)) {
      throw std::invalid_argument("metric " + name_ + ": names ending in " + std::string(suffix) +
                                  " are a histogram's samples");
    }
  }
  for (std::size_t i = 0; i < label_names_.size(); ++i) {
    const std::string& l = label_names_[i];
    if (!valid_label_name(l) || l.starts_with("__")) {
      throw std::invalid_argument("metric " + name_ + ": label name '" + l +
                                  "' is not [a-zA-Z_][a-zA-Z0-9_]* or starts with '__'");
    }
    if (l == "le" || l == "quantile") {
      throw std::invalid_argument("metric " + name_ + ": label name '" + l +
                                  "' is reserved (histogram buckets, summary quantiles)");
    }
    if (std::find(label_names_.begin(), label_names_.begin() + i, l) != label_names_.begin() + i) {
      throw std::invalid_argument("metric " + name_ + ": label name '" + l + "' given twice");
    }
  }
}

void MetricFamily::check(const LabelValues& values) const {
  if (values.size() == label_names_.size()) return;
  std::string names;
  for (const std::string& l : label_names_) names += (names.empty() ? "" : ", ") + l;
  throw std::invalid_argument("metric " + name_ + " takes " + std::to_string(label_names_.size()) +
                              " label values (" + names + "), not " +
                              std::to_string(values.size()));
}

void MetricFamily::append_sample(std::string& out, std::string_view sample_name,
                                 const LabelValues& values, double value,
                                 std::string_view extra_label, double extra_value) const {
  out += sample_name;
  if (!values.empty() || !extra_label.empty()) {
    char separator = '{';
    for (std::size_t i = 0; i < values.size(); ++i) {
      out += separator;
      out += label_names_[i];
      out += "=\"";
      append_escaped(out, values[i], true);
      out += '"';
      separator = ',';
    }
    if (!extra_label.empty()) {
      out += separator;
      out += extra_label;
      out += "=\"";
      append_value(out, extra_value);
      out += '"';
    }
    out += '}';
  }
  out += ' ';
  append_value(out, value);
  out += '\n';
}

void MetricFamily::render(std::string& out) const {
  out += "# HELP ";
  out += name_;
  out += ' ';
  append_escaped(out, help_, false);
  out += "\n# TYPE ";
  out += name_;
  out += ' ';
  out += type_;
  out += '\n';
  std::lock_guard lock(mutex_);
  render_samples(out);
}

}  // namespace detail

Counter::Counter(std::string name, std::string help, std::vector<std::string> label_names)
    : MetricFamily(std::move(name), std::move(help), "counter", std::move(label_names)) {
  if (!labelled()) series_.emplace();
}

void Counter::add(const LabelValues& values, double by) {
  check(values);
  if (!(by >= 0)) {
    throw std::invalid_argument("counter " + name() + " only goes up, not by " + value_text(by));
  }
  std::lock_guard lock(mutex_);
  series_[values] += by;
}

void Counter::render_samples(std::string& out) const {
  for (const auto& [values, value] : series_) append_sample(out, name(), values, value);
}

Gauge::Gauge(std::string name, std::string help, std::vector<std::string> label_names)
    : MetricFamily(std::move(name), std::move(help), "gauge", std::move(label_names)) {
  if (!labelled()) series_.emplace();
}

void Gauge::set(const LabelValues& values, double value) {
  check(values);
  std::lock_guard lock(mutex_);
  series_[values] = value;
}

void Gauge::add(const LabelValues& values, double by) {
  check(values);
  std::lock_guard lock(mutex_);
  series_[values] += by;
}

void Gauge::clear() {
  std::lock_guard lock(mutex_);
  series_.clear();
}

void Gauge::render_samples(std::string& out) const {
  for (const auto& [values, value] : series_) append_sample(out, name(), values, value);
}

Histogram::Histogram(std::string name, std::string help, std::vector<std::string> label_names,
                     std::vector<double> upper_bounds)
    : MetricFamily(std::move(name), std::move(help), "histogram", std::move(label_names)),
      upper_bounds_(std::move(upper_bounds)) {
  for (std::size_t i = 0; i < upper_bounds_.size(); ++i) {
    if (!std::isfinite(upper_bounds_[i]) || (i > 0 && !(upper_bounds_[i - 1] < upper_bounds_[i]))) {
      throw std::invalid_argument("histogram " + this->name() + ": bucket bound " +
                                  value_text(upper_bounds_[i]) +
                                  " is not finite or not above the one before (+Inf is implicit)");
    }
  }
  if (!labelled()) series_[{}].counts.resize(upper_bounds_.size());
}

void Histogram::observe(const LabelValues& values, double value) {
  check(values);
  // NaN is above no bound; lower_bound would put it in the first bucket.
  const std::size_t bucket =
      std::isnan(value) ? upper_bounds_.size()
                        : std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), value) -
                              upper_bounds_.begin();
  std::lock_guard lock(mutex_);
  Series& s = series_[values];
  if (s.counts.empty()) s.counts.resize(upper_bounds_.size());
  if (bucket < s.counts.size()) ++s.counts[bucket];
  ++s.count;
  s.sum += value;
}

void Histogram::render_samples(std::string& out) const {
  const std::string bucket = name() + "_bucket", sum = name() + "_sum", count = name() + "_count";
  for (const auto& [values, s] : series_) {
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < upper_bounds_.size(); ++i) {
      cumulative += s.counts[i];
      append_sample(out, bucket, values, static_cast<double>(cumulative), "le", upper_bounds_[i]);
    }
    append_sample(out, bucket, values, static_cast<double>(s.count), "le",
                  std::numeric_limits<double>::infinity());
    append_sample(out, sum, values, s.sum);
    append_sample(out, count, values, static_cast<double>(s.count));
  }
}

template <class F>
F& Metrics::add(std::unique_ptr<F> family) {
  std::lock_guard lock(mutex_);
  // The suffix rules keep a histogram's sample names apart from every other
  // family's name, so equal family names are the only clash left.
  for (const auto& f : families_) {
    if (f->name() == family->name()) {
      throw std::invalid_argument("metric " + family->name() + " is registered already");
    }
  }
  F& f = *family;
  families_.push_back(std::move(family));
  return f;
}

Counter& Metrics::counter(std::string name, std::string help,
                          std::vector<std::string> label_names) {
  return add(std::unique_ptr<Counter>(
      new Counter(std::move(name), std::move(help), std::move(label_names))));
}

Gauge& Metrics::gauge(std::string name, std::string help, std::vector<std::string> label_names) {
  return add(
      std::unique_ptr<Gauge>(new Gauge(std::move(name), std::move(help), std::move(label_names))));
}

Histogram& Metrics::histogram(std::string name, std::string help,
                              std::vector<std::string> label_names,
                              std::vector<double> upper_bounds) {
  return add(std::unique_ptr<Histogram>(new Histogram(
      std::move(name), std::move(help), std::move(label_names), std::move(upper_bounds))));
}

std::string Metrics::render() const {
  std::lock_guard lock(mutex_);
  std::string out;
  for (const auto& family : families_) family->render(out);
  return out;
}

}  // namespace stoker::serve
