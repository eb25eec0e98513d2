#!/usr/bin/env bash
# Builds and runs a libFuzzer fuzzer for the trace reader (default) or the decimal number parser.
#
#   Fuzz/run.sh [reader|number] [seconds] [extra libFuzzer flags...]
#
# Build: the MotionCore value types (MotionError, MotionSample, MotionVector) and every MotionTrace source are
# copied into Fuzz/.build-fuzz/src with their `import MotionCore` lines removed, and compiled as one module
# together with Fuzz/TraceReaderFuzzer.swift (or Fuzz/NumberParserFuzzer.swift) by
# `swiftc -sanitize=fuzzer,address -parse-as-library -O`. One module means no package build is needed, and
# the fuzzer can use internal API (such as the reader's buffer size).
#
# Run: for `seconds` (default 600) on one core, with the corpus in Fuzz/corpus/<target>/ (new interesting
# inputs are added there; run with `-merge` below to keep it small). Crashes are written to
# Fuzz/artifacts/<target>/ (ignored by git); reproduce one with
# `Fuzz/.build-fuzz/<target>-fuzzer Fuzz/artifacts/<target>/crash-…`.
#
# To minimise the corpus after a long run (libFuzzer's -set_cover_merge; the named seed-* files are kept):
#   Fuzz/run.sh reader merge
set -euo pipefail
cd "$(dirname "$0")"

target="${1:-reader}"
seconds="${2:-600}"
shift $(( $# > 2 ? 2 : $# ))

case "$target" in
    reader) entry=TraceReaderFuzzer.swift ;;
    number) entry=NumberParserFuzzer.swift ;;
    *) echo "usage: $0 [reader|number] [seconds|merge] [libFuzzer flags...]" >&2; exit 2 ;;
esac

build=.build-fuzz
src="$build/src"
rm -rf "$src"
mkdir -p "$src" "artifacts/$target" "corpus/$target"
for file in ../Sources/MotionCore/MotionError.swift ../Sources/MotionCore/MotionSample.swift \
    ../Sources/MotionCore/MotionVector.swift ../Sources/MotionTrace/*.swift; do
    sed -E '/^(public |internal )?import (MotionCore|RealModule)$/d' "$file" > "$src/$(basename "$file")"
done

binary="$build/$target-fuzzer"
echo "fuzz: building $binary"
swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name MotionTraceFuzz \
    "$src"/*.swift "$entry" -o "$binary"

if [ "$seconds" = merge ]; then
    echo "fuzz: minimising corpus/$target"
    rm -rf "$build/merged-$target"
    mkdir -p "$build/merged-$target"
    "$binary" -set_cover_merge=1 "$build/merged-$target" "corpus/$target" "$@"
    cp corpus/"$target"/seed-* "$build/merged-$target"/ 2>/dev/null || true  # keep the named seeds
    rm -rf "corpus/$target"
    mv "$build/merged-$target" "corpus/$target"
    exit 0
fi

echo "fuzz: running $binary for $seconds s on corpus/$target"
exec "$binary" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="artifacts/$target/" -print_final_stats=1 "$@" "corpus/$target"
