#!/usr/bin/env bash
# Allocations per sample of the event algorithms (issue 26: "0 allocations per sample"; the algorithms' rule:
# allocation-free per sample): runs Benchmarks/ EventBenchmarks (package-benchmark, mallocs counted by its
# MallocInterposer) and fails when any benchmark allocated, or reported no malloc count. Time per sample is
# reported, not checked: it depends on the machine (Docs/Performance.md compares builds within one run).
# Usage: Scripts/check-allocations.sh. Environment: SCRATCH (Benchmarks' build folder, default .build).
set -euo pipefail
cd "$(dirname "$0")/../Benchmarks"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
swift package --scratch-path "${SCRATCH:-.build}" --disable-sandbox benchmark --target EventBenchmarks \
    --no-progress > "$log" 2>&1 || { cat "$log" >&2; echo "check-allocations: the benchmarks failed" >&2; exit 1; }
python3 - "$log" <<'EOF'
import re, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
results, name = {}, None
for i, line in enumerate(lines):
    if line.startswith("╒") and i > 0:
        name = lines[i - 1].strip()
        results[name] = {}
    elif name and line.startswith("│") and "Metric" not in line:
        cells = [c.strip() for c in line.strip("│").split("│")]
        results[name][cells[0]] = cells[1:-1]  # p0 … p100, without the sample count
failed = []
if not results:
    failed.append("no benchmark results in the output")
for name, metrics in results.items():
    mallocs = next((v for k, v in metrics.items() if k.startswith("Malloc (total)")), None)
    time = next((v for k, v in metrics.items() if k.startswith("Time (wall clock) (ns)")), None)
    if mallocs is None:
        failed.append(f"{name}: no malloc count (is the MallocInterposer trait on?)")
        continue
    worst = max(int(v.replace(",", "")) for v in mallocs)
    p50 = time[2] if time else "?"
    print(f"  {name:32s} mallocs per run at most {worst}   time per sample p50 {p50} ns")
    if worst != 0:
        failed.append(f"{name}: {worst} mallocs")
if failed:
    print("check-allocations: " + "; ".join(failed), file=sys.stderr)
    sys.exit(1)
print(f"check-allocations: {len(results)} benchmarks, 0 allocations")
EOF
