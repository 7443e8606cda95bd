// Summaries of repeated timings, shared by the bench commands.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace stoker::tools {

// The median (the mean of the middle two for an even count); 0 for none.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Spread {
  double median = 0, min = 0, max = 0;
};

// num[r] / den[r] for each repetition r both have, summarised. Runs made
// in turns, rep by rep, share each moment's machine state (here: how the
// writer threads and the producers share the cores and the memory), so
// their per-rep ratios spread less than the ratio of the two medians.
// Pairs with a zero or missing side are left out; none gives {0, 0, 0}.
inline Spread ratios_per_rep(const std::vector<double>& num, const std::vector<double>& den) {
  std::vector<double> r;
  for (std::size_t i = 0; i < std::min(num.size(), den.size()); ++i)
    if (num[i] > 0 && den[i] > 0) r.push_back(num[i] / den[i]);
  if (r.empty()) return {};
  const auto [lo, hi] = std::minmax_element(r.begin(), r.end());
  return {median(r), *lo, *hi};
}

}  // namespace stoker::tools
