#!/usr/bin/env bash
# docs/CONTRACT.md is the course's shared contract word for word: byte-identical to CONTRACT.md in the
# shared/ folder beside the checkout (REPOSITORY/../shared/), where there is one. Where there is none
# (a clone on its own), it says so and exits 77, which CTest reports as skipped.
#   check_contract.sh OURS SHARED
set -euo pipefail
ours=$1 shared=$2
if [ ! -e "$shared" ]; then
  echo "skipped: no shared contract at $shared (a checkout without shared/ beside it)"
  exit 77
fi
[ -f "$ours" ] || { echo "FAIL: $ours is missing"; exit 1; }
if ! cmp "$ours" "$shared"; then
  echo "FAIL: $ours differs from the shared contract $shared (it must be a copy, byte for byte):"
  diff -u "$shared" "$ours" | head -n 40 || true
  exit 1
fi
echo "$ours is byte-identical to $shared ($(wc -c < "$ours") bytes)"
