#!/usr/bin/env bash
# bench_serve_check.sh STOKER: `stoker bench serve` runs end to end on the
# host backend at a toy size and reports both throughputs for each client
# count (the figures themselves belong to the GPU machine).
set -euo pipefail
out=$("$1" bench serve --backend host --log-n 6 --proofs 4 --clients 1,2 --json)
echo "$out"
python3 - "$out" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
assert d["ok"] is True
rows = d["rows"]
assert [r["clients"] for r in rows] == [1, 2], rows
for r in rows:
    assert r["daemon_proofs_per_s"] > 0 and r["in_process_proofs_per_s"] > 0, r
    assert 0 < r["p50_ms"] <= r["p99_ms"], r
    # Each proof's time inside the daemon lies within what its client saw.
    assert 0 < r["in_daemon_p50_ms"] <= r["p50_ms"], r
    assert abs(r["ratio"] - r["daemon_proofs_per_s"] / r["in_process_proofs_per_s"]) < 1e-9, r
PY
