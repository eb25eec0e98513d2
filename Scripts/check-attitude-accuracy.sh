#!/usr/bin/env bash
# Scores `motionctl attitude` on the shared broad-dev trials with ../shared/tools/score_attitude.py and fails when
# the accuracy is worse than the limits below (degrees), then runs the simulated magnetometer-calibration suite
# (`MagnetometerTrustTests`: heading error bounds with a clean field, hard iron, soft iron and magnets, fast rotation
# with breaks; a fit in use never less consistent than the raw readings). Needs python3 with numpy (installed from
# PyPI when missing). Usage: Scripts/check-attitude-accuracy.sh [path/to/shared]
#
# 9D is scored on eight draws of each recording: the trace as recorded, and the trace without its first k rows for
# k = 1…7 (those rows are in the unscored rest before the movement; the estimate there is the identity). A few
# samples' shift moves the moment a fit is applied or a magnetic reference is accepted, and with it a single
# recording's 9D error by up to a degree (broad-dev's mean over one draw by up to 0.26°): the limit applies to the
# mean over the draws, what the method gives on recordings it has not seen, not to one of them. See
# Docs/Attitude.md, "Validation".
set -euo pipefail
cd "$(dirname "$0")/.."
shared="${1:-../shared}"
data="$shared/datasets/broad-dev"
scorer="$shared/tools/score_attitude.py"
max_incl_6d=0.59    # VQF 2.1.2: 0.58
max_total_9d=1.89   # mean of the eight draws; VQF 2.1.2: 2.25; the build of 2f8a6ef: 1.904 (1.845 as recorded)
draws=8

if [ ! -d "$data" ]; then
    echo "check-attitude-accuracy: no dataset at $data" >&2
    exit 1
fi
python3 -c 'import numpy' 2>/dev/null || python3 -m pip install --quiet numpy

swift build -c release --product motionctl > /dev/null
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
mkdir -p "$out/6d"
for trace in "$data"/*.trace.csv; do
    .build/release/motionctl attitude --trace "$trace" --sensors accel,gyro > "$out/6d/$(basename "$trace" .trace.csv).csv"
done
# 9D, draw k (0…7) in 9d-k: the trace without its first k data rows, the estimate given the identity for those rows.
python3 - "$data" "$out" "$draws" <<'PY'
import glob, os, subprocess, sys
data, out, draws = sys.argv[1], sys.argv[2], int(sys.argv[3])
for trace in sorted(glob.glob(f'{data}/*.trace.csv')):
    name = os.path.basename(trace)[:-len('.trace.csv')]
    lines = open(trace).read().splitlines(keepends=True)
    head = next(i for i, line in enumerate(lines) if not line.startswith('#'))  # the column names
    for k in range(draws):
        os.makedirs(f'{out}/9d-{k}', exist_ok=True)
        shortened = f'{out}/{name}-{k}.trace.csv' if k else trace
        if k:
            open(shortened, 'w').writelines(lines[:head + 1] + lines[head + 1 + k:])
        estimate = subprocess.run(
            ['.build/release/motionctl', 'attitude', '--trace', shortened, '--frame', 'magnetic-north'],
            check=True, capture_output=True, text=True).stdout.splitlines(keepends=True)
        if k:
            os.remove(shortened)
        columns = next(i for i, line in enumerate(estimate) if not line.startswith('#'))
        skipped = [f"{line.split(',', 1)[0]},1,0,0,0\n" for line in lines[head + 1:head + 1 + k]]
        open(f'{out}/9d-{k}/{name}.csv', 'w').writelines(estimate[:columns + 1] + skipped + estimate[columns + 1:])
PY
# Every trial is read whole: its checksum and its count of output rows (one per input row) match the manifest.
python3 - "$data" "$out" "$draws" <<'PY'
import hashlib, json, sys
data, out, draws = sys.argv[1], sys.argv[2], int(sys.argv[3])
failures = []
for trial in json.load(open(f'{data}/manifest.json'))['trials']:
    name = trial['trace_file'][:-len('.trace.csv')]
    digest = hashlib.sha256(open(f"{data}/{trial['trace_file']}", 'rb').read()).hexdigest()
    if digest != trial['trace_sha256']:
        failures.append(f"{trial['trace_file']}: sha256 {digest}, manifest {trial['trace_sha256']}")
    for dimension in ['6d'] + [f'9d-{k}' for k in range(draws)]:
        with open(f'{out}/{dimension}/{name}.csv') as estimates:
            rows = sum(1 for line in estimates if not line.startswith('#')) - 1  # less the column names
        if rows != trial['samples']:
            failures.append(f"{trial['trace_file']}: {dimension} attitude has {rows} rows, manifest {trial['samples']} samples")
print('\n'.join(failures) if failures else 'broad-dev: every trial read whole (checksums and row counts as in the manifest)')
sys.exit(1 if failures else 0)
PY
python3 "$scorer" --data "$data" --estimates "$out/6d" --json "$out/6d.json" > /dev/null
for k in $(seq 0 $((draws - 1))); do
    python3 "$scorer" --data "$data" --estimates "$out/9d-$k" --frame nwu --json "$out/9d-$k.json" > /dev/null
done
python3 - "$out" "$max_incl_6d" "$max_total_9d" "$draws" <<'PY'
import json, statistics, sys
out, max_incl, max_total, draws = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
def mean(path, metric):
    return json.load(open(path))['groups']['all_trials'][metric]
incl = mean(f'{out}/6d.json', 'incl_deg')
totals = [mean(f'{out}/9d-{k}.json', 'total_deg') for k in range(draws)]
total = statistics.mean(totals)
print(f'attitude accuracy on broad-dev: 6D incl {incl:.3f} deg (limit {max_incl}); 9D total {total:.3f} deg, mean of '
      f'{draws} draws (limit {max_total}): as recorded {totals[0]:.3f}, the draws {min(totals):.3f} to {max(totals):.3f}')
sys.exit(0 if incl <= max_incl and total <= max_total else 1)
PY
swift test --filter MagnetometerTrustTests
