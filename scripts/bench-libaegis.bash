#!/bin/bash
# AEGIS sealing against libaegis, the reference C implementation, on this
# machine in the same minute: tscryptfs -speed's AEGIS-256X2 and AEGIS-128X2
# native rows beside libaegis sealing the same blocks with the same nonce
# cost (scripts/libaegis-seal.c). libaegis is built in a scratch directory
# and removed afterwards; it is not a dependency.
#
#   bash scripts/bench-libaegis.bash [LIBAEGIS_SOURCE_DIR]
#
# Without a source directory, https://github.com/aegis-aead/libaegis is
# cloned. Needs cmake, gcc, OpenSSL's headers (libssl-dev) and a built tree
# (bash setup.bash). Both sides time one 0.45 s run per cipher; the best of
# three alternating runs of each side is printed.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d /tmp/libaegis-bench.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
src=${1:-}
if [ -z "$src" ]; then
    git clone -q --depth 1 https://github.com/aegis-aead/libaegis "$scratch/libaegis"
    src=$scratch/libaegis
fi
cmake -S "$src" -B "$scratch/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="-O3 -march=native" >/dev/null
make -C "$scratch/build" -j"$(nproc)" >/dev/null
gcc -O3 -march=native -I"$src/src/include" "$here/scripts/libaegis-seal.c" "$scratch/build/libaegis.a" -lcrypto -o "$scratch/seal"

declare -A ours=() ref=()
best() { awk -v a="${1:-0}" -v b="$2" 'BEGIN { print (b > a ? b : a) }'; }
for round in 1 2 3; do
    while read -r name mbs; do ref[$name]=$(best "${ref[$name]:-0}" "$mbs"); done < <("$scratch/seal")
    while read -r name mbs; do ours[$name]=$(best "${ours[$name]:-0}" "$mbs"); done < <(
        node "$here/bin/tscryptfs" -speed -json | node -e '
            const doc = JSON.parse(require("fs").readFileSync(0, "utf8"));
            for (const r of doc.results) if (r.implementation === "native" && r.mbPerSec) console.log(r.cipher, r.mbPerSec);')
    echo "round $round done" >&2
done
printf '%-12s %14s %14s %7s\n' cipher tscryptfs libaegis ratio
for name in AEGIS-256X2 AEGIS-128X2; do
    awk -v n="$name" -v o="${ours[$name]:-0}" -v r="${ref[$name]:-0}" \
        'BEGIN { printf "%-12s %9.0f MB/s %9.0f MB/s %6.2fx\n", n, o, r, (r > 0 ? o / r : 0) }'
done
