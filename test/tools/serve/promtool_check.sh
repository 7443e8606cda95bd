#!/usr/bin/env bash
# promtool_check.sh SAMPLE: what SAMPLE prints goes through `promtool check
# metrics`, which parses it as a Prometheus scrape would and lints it; any
# complaint fails (promtool exits 1 on a parse error, 3 on a lint problem).
# Skipped (77) where promtool is not installed (Debian: the prometheus package).
set -euo pipefail
sample=$1
if ! command -v promtool >/dev/null; then
  echo "promtool not found (Debian: apt-get install prometheus); skipped"
  exit 77
fi
text=$(mktemp)
trap 'rm -f "$text"' EXIT
"$sample" >"$text"
cat "$text"
echo "--- promtool check metrics:"
if ! report=$(promtool check metrics <"$text" 2>&1) || [ -n "$report" ]; then
  echo "$report"
  echo "promtool refused the sample"
  exit 1
fi
echo "(no complaints)"
