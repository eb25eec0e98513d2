#!/usr/bin/env bash
# Regenerates broad-slow-rotation-excerpt.csv: the first 60 s of BROAD trial 02 from the shared broad-dev split,
# with its attribution comments kept and one comment added that says what was cut.
# Usage: Recordings/make-broad-excerpt.sh [path/to/broad-dev]   (default: ../shared/datasets/broad-dev)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
data="${1:-$here/../../shared/datasets/broad-dev}"
src="$data/02_undisturbed_slow_rotation_B.trace.csv"
out="$here/broad-slow-rotation-excerpt.csv"
rows=$(awk -F, '!/^#/ && NR > 1 && $1 ~ /^[0-9]/ && $1 < 60 { n++ } END { print n }' "$src")
awk -F, -v rows="$rows" '
    /^#/ {
        comments++
        if ($0 ~ /^# Sample rate/) sub(/rows\.$/, "rows in the full trial.")
        print
        if (comments == 5) printf "# Excerpt (swift-motion Recordings/): the first %d rows (t < 60 s) of the trial, otherwise unchanged; made by Recordings/make-broad-excerpt.sh.\n", rows
        next
    }
    !header { header = 1; print; next }
    $1 < 60 { print }
' "$src" > "$out"
echo "wrote $out ($rows rows)"
