#!/usr/bin/env bash
# systemd_verify.sh UNIT: `systemd-analyze verify` on the configured unit.
# Fails on a non-zero exit (ExecStart's binary missing, a dependency not
# found) and on any line about the unit itself: an unknown key or a value
# verify cannot parse is reported with "ignoring", and systemd would start
# the service without that setting (a misspelt hardening option is one
# silently dropped); without --recursive-errors=no, verify exits 0 on those. Lines about other units (the system's
# own, loaded as dependencies) are shown, not counted. A User= that does not
# exist on this machine is not reported: verify does not look it up.
# Skipped (77) where systemd-analyze is not installed.
set -uo pipefail
unit=$1
if ! command -v systemd-analyze >/dev/null; then
  echo "systemd-analyze not found; skipped"
  exit 77
fi
out=$(systemd-analyze verify --recursive-errors=no "$unit" 2>&1)
rc=$?
echo "systemd-analyze verify $unit: exit $rc"
[ -n "$out" ] && echo "$out"
ours=$(grep -F -e "$unit:" -e "$(basename "$unit"):" <<<"$out")
if [ "$rc" -ne 0 ] || [ -n "$ours" ]; then
  echo "the unit has errors"
  grep -q "is not executable" <<<"$out" && echo "(ExecStart's binary: build the stoker target first)"
  exit 1
fi
echo "(no complaints)"
