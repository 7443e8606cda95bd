#!/usr/bin/env bash
# stoker's Groth16 proofs checked by snarkjs itself, and snarkjs's by stoker:
# for each committed circuit (data/), `stoker prove` then `snarkjs groth16
# verify` and `stoker verify`; snarkjs's own proof through `stoker verify`;
# a public signal changed, and a proof point changed, fail both verifiers;
# a toy key from `stoker keys generate` proves and verifies with snarkjs
# too (its verification key exported by snarkjs from the zkey).
# Usage: snarkjs_check.sh STOKER DATA_DIR SNARKJS
# SNARKJS is snarkjs's command (tools/dev installs snarkjs 0.7.6 under the
# build folder where the npm registry answers); without it the check exits
# 77, which CTest reports as skipped.
set -euo pipefail
stoker=$1 data=$2 snarkjs=${3:-}
if [ -z "$snarkjs" ] || [ ! -x "$snarkjs" ]; then
  echo "snarkjs is not installed (tools/dev installs it where npm's registry answers): skipped"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAILED: $*" >&2; exit 1; }
expect_invalid() {  # what, command...
  local what=$1; shift
  if "$@" >"$work/out" 2>&1; then cat "$work/out"; fail "$what was accepted"; fi
}

for c in multiplier bits nopublic; do
  "$stoker" prove --zkey "$data/$c.zkey" --wtns "$data/$c.wtns" \
    --proof "$work/${c}_proof.json" --public "$work/${c}_public.json"
  cmp "$work/${c}_public.json" "$data/${c}_public.json" || fail "$c: public.json differs from snarkjs's"
  "$snarkjs" groth16 verify "$data/${c}_verification_key.json" "$work/${c}_public.json" \
    "$work/${c}_proof.json" | tee "$work/out"
  grep -q "OK" "$work/out" || fail "$c: snarkjs rejected stoker's proof"
  "$stoker" verify --vk "$data/${c}_verification_key.json" --proof "$work/${c}_proof.json" \
    --public "$work/${c}_public.json"
  "$stoker" verify --vk "$data/${c}_verification_key.json" --proof "$data/${c}_proof.json" \
    --public "$data/${c}_public.json"
done

# A public signal changed: both verifiers refuse.
sed 's/"\([0-9]\)/"1\1/' "$work/multiplier_public.json" >"$work/bad_public.json"
expect_invalid "stoker verify, changed public signal" "$stoker" verify \
  --vk "$data/multiplier_verification_key.json" --proof "$work/multiplier_proof.json" \
  --public "$work/bad_public.json"
"$snarkjs" groth16 verify "$data/multiplier_verification_key.json" "$work/bad_public.json" \
  "$work/multiplier_proof.json" >"$work/out" 2>&1 || true
grep -q "OK" "$work/out" && fail "snarkjs accepted a changed public signal"

# pi_c replaced by pi_a (a valid point, the wrong one): both refuse.
node -e '
  const fs = require("fs"); const p = JSON.parse(fs.readFileSync(process.argv[1]));
  p.pi_c = p.pi_a; fs.writeFileSync(process.argv[2], JSON.stringify(p, null, 1));
' "$work/multiplier_proof.json" "$work/bad_proof.json"
expect_invalid "stoker verify, changed proof" "$stoker" verify \
  --vk "$data/multiplier_verification_key.json" --proof "$work/bad_proof.json" \
  --public "$work/multiplier_public.json"
"$snarkjs" groth16 verify "$data/multiplier_verification_key.json" \
  "$work/multiplier_public.json" "$work/bad_proof.json" >"$work/out" 2>&1 || true
grep -q "OK" "$work/out" && fail "snarkjs accepted a changed proof"

# A toy key of stoker's: snarkjs exports its verification key, proves with it
# and verifies stoker's proof.
"$stoker" keys generate --log-n 8 --seed 3 --public 2 --zkey "$work/toy.zkey" \
  --wtns "$work/toy.wtns" --vk "$work/toy_vk_stoker.json"
"$snarkjs" zkey export verificationkey "$work/toy.zkey" "$work/toy_vk.json" >/dev/null
cmp "$work/toy_vk.json" "$work/toy_vk_stoker.json" || fail "toy key: verification keys differ"
"$stoker" prove --zkey "$work/toy.zkey" --wtns "$work/toy.wtns" --proof "$work/toy_proof.json" \
  --public "$work/toy_public.json"
"$snarkjs" groth16 verify "$work/toy_vk.json" "$work/toy_public.json" "$work/toy_proof.json" \
  | tee "$work/out"
grep -q "OK" "$work/out" || fail "toy key: snarkjs rejected stoker's proof"
"$snarkjs" groth16 prove "$work/toy.zkey" "$work/toy.wtns" "$work/toy_sproof.json" \
  "$work/toy_spublic.json"
"$stoker" verify --vk "$work/toy_vk.json" --proof "$work/toy_sproof.json" \
  --public "$work/toy_spublic.json"
echo "snarkjs and stoker agree on every proof"
