// The progress line fits the terminal it is drawn on, so that "\r" redraws
// it in place instead of wrapping onto a new line at every update.
#include "tools/cli/progress_bar.hpp"

#include <gtest/gtest.h>

#include <string>

namespace stoker::tools {
namespace {

TEST(ProgressBar, FitsEveryTerminalWidthLeavingTheLastColumnFree) {
  for (int columns : {1, 5, 11, 12, 20, 30, 45, 80, 200})
    for (std::size_t total : {std::size_t{8}, std::size_t{1000000}})
      for (std::size_t done : {std::size_t{0}, total / 2, total}) {
        const std::string line = progress_line(done, total, columns);
        EXPECT_LE(static_cast<int>(line.size()), std::max(columns - 1, 0))
            << columns << " columns: '" << line << "'";
      }
}

TEST(ProgressBar, ShowsTheCountAndABarWhereThereIsRoom) {
  EXPECT_EQ(progress_line(4, 8, 80), "  [" + std::string(20, '#') + std::string(20, ' ') + "] 4/8");
  const std::string narrow = progress_line(4, 8, 30);
  EXPECT_NE(narrow.find("] 4/8"), std::string::npos) << narrow;
  EXPECT_EQ(progress_line(4, 8, 10), "4/8");
}

}  // namespace
}  // namespace stoker::tools
