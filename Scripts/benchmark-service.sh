#!/usr/bin/env bash
# motiond's figures (issue 12; Docs/Performance.md, "motiond"): the release motiond on a private dbus-daemon, an
# emulated 6-axis IMU at 1 kHz (umockdev), real clients. Runs the opt-in ServiceBenchmarkTests, which print the
# figures and assert nothing about time. Usage:
#   Scripts/benchmark-service.sh [streams|fidelity|memory|all] [motiond arguments…]
# for example `Scripts/benchmark-service.sh streams --batch-duration 0.001`. Environment:
# SWIFT_MOTION_SERVICE_BENCHMARK_SECONDS (the stream benchmark's window, default 30),
# SWIFT_MOTION_SERVICE_BENCHMARK_SAMPLES (the memory benchmark's samples, default 10000000),
# SWIFT_MOTION_SERVICE_BENCHMARK_NODE (fifo, the default, or pty), SWIFT_MOTION_MOTIOND (another motiond build),
# SCRATCH (the build folder, default .build).
set -euo pipefail
cd "$(dirname "$0")/.."
which="${1:-all}"
shift || true
scratch="${SCRATCH:-.build}"
case "$which" in
    streams) filter="ServiceBenchmarkTests/streams" ;;
    fidelity) filter="ServiceBenchmarkTests/fidelity" ;;
    memory) filter="ServiceBenchmarkTests/memory" ;;
    all) filter="ServiceBenchmarkTests" ;;
    *) echo "usage: $0 [streams|fidelity|memory|all] [motiond arguments…]" >&2; exit 2 ;;
esac
swift build --scratch-path "$scratch" -c release --product motiond > /dev/null
swift build --scratch-path "$scratch" --build-tests > /dev/null
SWIFT_MOTION_SERVICE_BENCHMARK=1 \
SWIFT_MOTION_MOTIOND="${SWIFT_MOTION_MOTIOND:-$PWD/$scratch/release/motiond}" \
SWIFT_MOTION_SERVICE_BENCHMARK_ARGS="$*" \
    swift test --scratch-path "$scratch" --skip-build --filter "$filter" 2>&1 \
    | grep -v -e '^◇' -e '^↳' -e '^Test Suite' -e 'Executed 0 tests'
