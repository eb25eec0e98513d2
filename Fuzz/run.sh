#!/usr/bin/env bash
# Builds and runs a libFuzzer fuzzer:
#   reader   the trace reader (default)
#   number   the decimal number parser
#   state    the calibration file motiond restores at start (decode and check; an accepted state runs a filter)
#   request  OpenStream's arguments and option dictionary (StreamRequest) as D-Bus values
#   store    a history store's segment file (MotionStore's frames: scan, decode, write again)
#
#   Fuzz/run.sh [reader|number|state|request|store] [seconds|merge|runs=N|build] [extra libFuzzer flags...]
#
# Build: the sources a target needs are copied into Fuzz/.build-fuzz/src-<target> with their imports of this
# package's modules (and of RealModule) removed, and compiled as one module together with the target's entry point
# by `swiftc -sanitize=fuzzer,address -parse-as-library -O -package-name swift_motion`. One module means no package
# build is needed, and the fuzzer can use internal and package API. `state` and `request` also compile
# swift-numerics' RealModule sources into that module (from .build/checkouts, resolved by SwiftPM if missing).
#
# Run: for `seconds` (default 600) on one core, with the corpus in Fuzz/corpus/<target>/ (new interesting
# inputs are added there; run with `merge` below to keep it small). `runs=N` runs N inputs after the corpus and
# adds nothing to it (CI: .ci/run). `build` only builds; FUZZ_SKIP_BUILD=1 uses a fuzzer already built. Crashes are written to Fuzz/artifacts/<target>/
# (ignored by git); reproduce one with `Fuzz/.build-fuzz/<target>-fuzzer Fuzz/artifacts/<target>/crash-…`.
#
# To minimise the corpus after a long run (libFuzzer's -set_cover_merge; the named seed-* files are kept):
#   Fuzz/run.sh reader merge
set -euo pipefail
cd "$(dirname "$0")"
# libFuzzer reports crashes itself; Swift's backtracer would hold a crashed fuzzer for up to a minute first.
export SWIFT_BACKTRACE=enable=no

target="${1:-reader}"
mode="${2:-600}"
shift $(( $# > 2 ? 2 : $# ))

sources=../Sources
# The trace format's files without the trace source (a MotionManager input: threads, not parsing).
trace=($(ls "$sources"/MotionTrace/*.swift | grep -v '/TraceSource\.swift$'))
core_trace=("$sources"/MotionCore/MotionError.swift "$sources"/MotionCore/MotionSample.swift
    "$sources"/MotionCore/MotionVector.swift "$sources"/MotionSystem/SystemErrno+System.swift "${trace[@]}")
# MotionCore without the source model (MotionManager's inputs), which the fuzzers do not reach.
core=($(ls "$sources"/MotionCore/*.swift | grep -v '/MotionSource\.swift$\|/MemorySources\.swift$'))
numerics=false
max_len=4096
case "$target" in
    reader) entry=TraceReaderFuzzer.swift; files=("${core_trace[@]}") ;;
    number) entry=NumberParserFuzzer.swift; files=("${core_trace[@]}") ;;
    state)
        entry=StateFuzzer.swift
        files=("${core[@]}" "$sources"/MotionSystem/SystemErrno+System.swift
            $(find "$sources"/MotionAlgorithms -name '*.swift' | sort) "${trace[@]}" "$sources"/Motion/CalibrationFile.swift)
        numerics=true
        max_len=16384  # a calibration file is about 11 KB
        ;;
    request)
        entry=RequestFuzzer.swift
        files=("${core[@]}" "$sources"/MotionSystem/SystemErrno+System.swift "${trace[@]}"
            "$sources"/MotionDBus/DBusValue.swift "$sources"/MotionDBus/DBusInterface.swift
            "$sources"/MotionService/StreamRequest.swift "$sources"/MotionProtocol/Motion1Interface.swift)
        numerics=true
        ;;
    store)
        entry=StoreFuzzer.swift
        files=("${core[@]}" "$sources"/MotionSystem/SystemErrno+System.swift "${trace[@]}" "$sources"/MotionStore/CRC32C.swift
            "$sources"/MotionStore/StoreFormat.swift)
        numerics=true
        max_len=16384
        ;;
    *) echo "usage: $0 [reader|number|state|request|store] [seconds|merge|runs=N|build] [libFuzzer flags...]" >&2; exit 2 ;;
esac

build=.build-fuzz
src="$build/src-$target"
rm -rf "$src"
mkdir -p "$src" "artifacts/$target" "corpus/$target"
for file in "${files[@]}"; do
    sed -E '/^(public |package |internal )?import (MotionCore|MotionAlgorithms|MotionTrace|MotionDBus|MotionSystem|MotionProtocol|RealModule)$/d' \
        "$file" > "$src/$(basename "$file")"
done
flags=()
if $numerics; then
    checkout=../.build/checkouts/swift-numerics
    [ -d "$checkout" ] || (cd .. && swift package resolve)
    for file in "$checkout"/Sources/RealModule/*.swift; do
        cp "$file" "$src/RealModule-$(basename "$file")"
    done
    flags+=(-I "$checkout/Sources/_NumericsShims/include")
fi

binary="$build/$target-fuzzer"
if [ "${FUZZ_SKIP_BUILD:-}" = 1 ] && [ -x "$binary" ]; then
    echo "fuzz: using $binary as built"
else
    echo "fuzz: building $binary"
    # (ld.gold warns about every ASan helper symbol; those lines are dropped.)
    swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name MotionFuzz -package-name swift_motion \
        "${flags[@]}" "$src"/*.swift "$entry" -o "$binary" \
        2> >(grep -v "ld.gold: warning: Cannot export local symbol" >&2)
fi

common=(-max_len="$max_len" -timeout=10 -rss_limit_mb=2048 -artifact_prefix="artifacts/$target/" -print_final_stats=1)
case "$mode" in
    build) exit 0 ;;
    merge)
        echo "fuzz: minimising corpus/$target"
        rm -rf "$build/merged-$target"
        mkdir -p "$build/merged-$target"
        "$binary" -set_cover_merge=1 -max_len="$max_len" "$build/merged-$target" "corpus/$target" "$@"
        cp corpus/"$target"/seed-* "$build/merged-$target"/ 2>/dev/null || true  # keep the named seeds
        rm -rf "corpus/$target"
        mv "$build/merged-$target" "corpus/$target"
        ;;
    runs=*)
        # A fixed number of inputs after the corpus, nothing written to it: a repeatable check.
        # New inputs go to a scratch folder (the first one named), not to the committed corpus.
        echo "fuzz: running $binary on corpus/$target, then ${mode#runs=} inputs"
        rm -rf "$build/new-$target"
        mkdir -p "$build/new-$target"
        exec "$binary" -runs="${mode#runs=}" -seed=1 "${common[@]}" "$@" "$build/new-$target" "corpus/$target"
        ;;
    *)
        echo "fuzz: running $binary for $mode s on corpus/$target"
        exec "$binary" -max_total_time="$mode" "${common[@]}" "$@" "corpus/$target"
        ;;
esac
