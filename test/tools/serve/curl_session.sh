#!/usr/bin/env bash
# curl_session.sh STOKER DATA_DIR: the daemon as a curl user meets it (the
# README's transcript): start `stoker serve` on the host backend, load a
# key, prove with the witness as a path and as the body, read status, check
# /metrics with promtool (where installed), evict, SIGTERM. Every answer is
# checked for its status and content; the proof is checked by
# `stoker verify` against snarkjs's verification key.
set -euo pipefail
stoker=$1
data=$(cd "$2" && pwd)
command -v curl >/dev/null || { echo "curl not found; skipped"; exit 77; }
dir=$(mktemp -d)
pid=""
cleanup() {
  [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
sock=$dir/stoker.sock
"$stoker" serve --backend host --socket "$sock" --state-dir "$dir" --allow-dir "$data" \
  >"$dir/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
  curl -sf --unix-socket "$sock" http://stoker/healthz >/dev/null 2>&1 && break
  sleep 0.1
done

# call METHOD PATH EXPECTED_STATUS [curl args...]: prints the body; fails on
# another status.
call() {
  local method=$1 path=$2 want=$3
  shift 3
  local out status
  out=$(curl -s --unix-socket "$sock" -X "$method" -w '\n%{http_code}' "$@" "http://stoker$path")
  status=${out##*$'\n'}
  body=${out%$'\n'*}
  echo "$ curl -X $method $path -> $status"
  echo "$body"
  if [ "$status" != "$want" ]; then
    echo "expected HTTP $want" >&2
    cat "$dir/serve.log" >&2
    exit 1
  fi
}
field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])$2)" "$body"; }

call POST /v1/keys 201 -H 'Content-Type: application/json' \
  -d "{\"name\": \"multiplier\", \"path\": \"$data/multiplier.zkey\", \"format\": \"zkey\"}"
[ "$(field '' '["state"]')" = ready ]
call GET /v1/keys 200
call POST /v1/proofs 202 -H 'Content-Type: application/json' \
  -d "{\"key\": \"multiplier\", \"witness\": {\"path\": \"$data/multiplier.wtns\"}, \"priority\": \"high\"}"
id=$(field '' '["id"]')
call GET "/v1/proofs/$id?wait_ms=60000" 200
[ "$(field '' '["state"]')" = done ]
python3 -c "import json,sys; print(json.dumps(json.loads(sys.argv[1])['proof']))" "$body" >"$dir/proof.json"
python3 -c "import json,sys; print(json.dumps(json.loads(sys.argv[1])['public']))" "$body" >"$dir/public.json"
"$stoker" verify --vk "$data/multiplier_verification_key.json" --proof "$dir/proof.json" \
  --public "$dir/public.json"
call POST "/v1/proofs?key=multiplier&priority=low" 202 \
  -H 'Content-Type: application/octet-stream' --data-binary "@$data/multiplier.wtns"
id2=$(field '' '["id"]')
call GET "/v1/proofs/$id2?wait_ms=60000" 200
[ "$(field '' '["state"]')" = done ]
call DELETE "/v1/proofs/$id2" 409
call GET /v1/status 200
call GET /metrics 200
grep -q 'stoker_proofs_total{outcome="done"} 2' <<<"$body"
if command -v promtool >/dev/null; then
  echo "--- promtool check metrics:"
  if ! report=$(promtool check metrics <<<"$body" 2>&1) || [ -n "$report" ]; then
    echo "$report"
    exit 1
  fi
  echo "(no complaints)"
else
  echo "promtool not found: /metrics not linted"
fi
call DELETE /v1/keys/multiplier 200
call GET /v1/proofs/does-not-exist 404
kill -TERM "$pid"
wait "$pid"
status=$?
pid=""
echo "stoker serve exited with $status"
[ "$status" = 0 ]
