#!/usr/bin/env bash
# Makes the Groth16 test data in this folder with the real tools: circom 2
# (the npm package circom2 0.2.23, a WASM build of circom 2.2.3) compiles
# the three circuits here (multiplier: one public input and one public
# output; bits: bit decompositions, so the witness is mostly 0 and 1 and A
# and B hold points at infinity; nopublic: no public signal at all) for
# BLS12-381 with `-p bls12381`; snarkjs 0.7.6 runs a powers-of-tau ceremony
# of power 8 on bls12381 (new, one contribution, prepare phase2), then for
# each circuit `groth16 setup`, one `zkey contribute`, `zkey verify`,
# `zkey export verificationkey`, `wtns calculate` from the input json with
# circom's wasm witness generator, `groth16 prove` and `groth16 verify`.
# It keeps NAME.zkey, NAME.wtns, NAME_proof.json, NAME_public.json and
# NAME_verification_key.json for each circuit, and, for the readers'
# refusals, a PLONK key of the multiplier (multiplier_plonk.zkey) and a
# bn128 key and witness of it (multiplier_bn128.zkey, .wtns, from a bn128
# ceremony of power 4). snarkjs mixes 64 bytes from the operating system
# into every contribution besides the -e text, and proving draws r and s at
# random, so a rerun makes different (equally valid) keys and proofs: the
# tests read the committed files, not a rerun's. Needs node and npm (the
# npm registry); everything else goes into a temporary folder, removed at
# the end. Run: test/engine/groth16/data/make_test_data.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

npm init -y >/dev/null
npm install --silent --no-audit --no-fund circom2@0.2.23 snarkjs@0.7.6
circom=$work/node_modules/.bin/circom2
snarkjs=$work/node_modules/.bin/snarkjs

ceremony() {  # curve power output
  "$snarkjs" powersoftau new "$1" "$2" "pot_$1_0.ptau"
  "$snarkjs" powersoftau contribute "pot_$1_0.ptau" "pot_$1_1.ptau" --name=stoker -e="stoker test data $1"
  "$snarkjs" powersoftau prepare phase2 "pot_$1_1.ptau" "$3"
}

ceremony bls12381 8 pot_bls12381.ptau
for c in multiplier bits nopublic; do
  "$circom" "$here/$c.circom" --r1cs --wasm -p bls12381 -o .
  "$snarkjs" groth16 setup "$c.r1cs" pot_bls12381.ptau "${c}_0.zkey"
  "$snarkjs" zkey contribute "${c}_0.zkey" "$here/$c.zkey" --name=stoker -e="stoker $c"
  "$snarkjs" zkey verify "$c.r1cs" pot_bls12381.ptau "$here/$c.zkey"
  "$snarkjs" zkey export verificationkey "$here/$c.zkey" "$here/${c}_verification_key.json"
  "$snarkjs" wtns calculate "${c}_js/$c.wasm" "$here/${c}_input.json" "$here/$c.wtns"
  "$snarkjs" groth16 prove "$here/$c.zkey" "$here/$c.wtns" "$here/${c}_proof.json" "$here/${c}_public.json"
  "$snarkjs" groth16 verify "$here/${c}_verification_key.json" "$here/${c}_public.json" "$here/${c}_proof.json"
done
"$snarkjs" plonk setup multiplier.r1cs pot_bls12381.ptau "$here/multiplier_plonk.zkey"

ceremony bn128 4 pot_bn128.ptau
mkdir bn128
"$circom" "$here/multiplier.circom" --r1cs --wasm -p bn128 -o bn128
"$snarkjs" groth16 setup bn128/multiplier.r1cs pot_bn128.ptau "$here/multiplier_bn128.zkey"
"$snarkjs" wtns calculate bn128/multiplier_js/multiplier.wasm "$here/multiplier_input.json" \
  "$here/multiplier_bn128.wtns"
