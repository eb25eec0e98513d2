#!/usr/bin/env bash
# The pedometer's accuracy (issue 26; Docs/Pedometer.md, "Validation"): the release motionctl's `steps` on
#   1. the Oxford Step Counter development walks (../shared/datasets/oxford-steps-dev: 48 walks with counted steps;
#      Oxford Step Counter data set by D. Salvi, C. Velardo, J. Brynes, L. Tarassenko, CC BY 4.0), scored by
#      ../shared/tools/score_steps.py: MAPE of the totals, worst walk, and the same per user, phone, device and
#      position; then again without the seven walks whose truth the data set's README flags as uncertain;
#   2. broad-dev's nine recordings (an IMU turned, shaken, tapped, moved by hand; never walked) and the shipped
#      non-walking recordings (Recordings/), which must give 0 steps;
#   3. both again at 50 and 25 Hz (resampled by Scripts/resample-walks.py): figures reported, not required.
# No constant of the step detector is fitted (optimised) on these files; a few design decisions were informed by
# them (listed in Docs/Pedometer.md, "How the data shaped the design"). The per-person and per-device figures are
# reported because the figures that matter are those on people and phones the design never saw.
# Usage:
#   Scripts/check-steps.sh [--enforce-goals] [--json FILE]
# --enforce-goals also fails (status 1) when the issue's goals are missed: MAPE ≤ 1 %, no walk worse than 3 %.
# Environment: SHARED (default ../shared, else /work/shared), SCRATCH (the build folder, default .build), JOBS.
# Every build and run is under `nice -n 19`.
set -euo pipefail
cd "$(dirname "$0")/.."
enforce=()
json=()
while [ $# -gt 0 ]; do
    case "$1" in
        --enforce-goals) enforce=(--max-mape 1 --max-worst 3) ;;
        --json) json=(--json "$2"); shift ;;
        *) echo "usage: $0 [--enforce-goals] [--json FILE]" >&2; exit 2 ;;
    esac
    shift
done
shared="${SHARED:-}"
if [ -z "$shared" ]; then
    if [ -d ../shared/datasets ]; then shared=../shared; else shared=/work/shared; fi
fi
scratch="${SCRATCH:-.build}"
jobs="${JOBS:-2}"
nice -n 19 swift build --scratch-path "$scratch" -c release --product motionctl > /dev/null
bin="$PWD/$scratch/release/motionctl"
uncertain=(Pixel_Jamie_Hard_Armband_1 Pixel_Jamie_Hard_Armband_2 Pixel_Jamie_Hard_SwingingArm_1
    Pixel_Jamie_Hard_SwingingArm_2 Samsung_Dario_Hard_ArmBand_2 Samsung_Dario_Hard_FrontPocket_1
    Samsung_Dario_Hard_FrontPocket_2)
never_walked=("$shared"/datasets/broad-dev/*.trace.csv Recordings/*.csv)
# score DIR [ARGUMENTS…]: the scorer on the walks in DIR with motionctl steps; its status is returned.
score() {
    local data="$1"
    shift
    nice -n 19 python3 "$shared/tools/score_steps.py" --data "$data" --cmd '{bin} steps --trace {trace}' \
        --bin "$bin" --jobs "$jobs" "$@"
}
# steps_of TRACE: the total that motionctl steps counts on TRACE.
steps_of() { nice -n 19 "$bin" steps --trace "$1" | tail -n 1 | cut -d, -f3; }

echo "== oxford-steps-dev: all 48 walks (no constant fitted to them; truth uncertain on 7, marked by the README)"
status=0
score "$shared/datasets/oxford-steps-dev" --by user --by phone --by device --by position "${json[@]}" \
    "${enforce[@]}" || status=1

echo
echo "== oxford-steps-dev without the 7 walks of uncertain truth (41 walks)"
excludes=()
for name in "${uncertain[@]}"; do excludes+=(--exclude "$name"); done
score "$shared/datasets/oxford-steps-dev" --quiet "${excludes[@]}" || true

echo
echo "== recordings never walked: every one must give 0 steps"
total=0
for trace in "${never_walked[@]}"; do
    steps=$(steps_of "$trace")
    printf '%6s  %s\n' "$steps" "$trace"
    total=$((total + steps))
done
echo "total: $total steps (goal: 0; the published Oxford algorithm counts 2,537 on broad-dev)"
[ "$total" -eq 0 ] || status=1

# 3. The same at the lower rates a live device may run at (50 Hz is what `steps` asks a device for; 25 Hz is the
#    lowest the detector is specified for): each recording resampled by Scripts/resample-walks.py as a sensor set
#    to that rate would give it. Figures reported, not required (Docs/Pedometer.md, "Lower sample rates").
never_walked_dir="$scratch/steps-never-walked"
rm -rf "$never_walked_dir"
mkdir -p "$never_walked_dir"
for trace in "${never_walked[@]}"; do
    ln -s "$(cd "$(dirname "$trace")" && pwd)/$(basename "$trace")" "$never_walked_dir/"
done
for rate in 50 25; do
    walks="$scratch/steps-walks-$rate-hz"
    still="$scratch/steps-never-walked-$rate-hz"
    rm -rf "$walks" "$still"
    nice -n 19 python3 Scripts/resample-walks.py "$shared/datasets/oxford-steps-dev" "$walks" "$rate"
    nice -n 19 python3 Scripts/resample-walks.py "$never_walked_dir" "$still" "$rate"
    echo
    echo "== at $rate Hz: the 48 walks, the 41 of certain truth, the recordings never walked (reported)"
    # A trace that motionctl cannot read fails the check; the figures themselves are not required.
    score "$walks" --quiet || status=1
    score "$walks" --quiet "${excludes[@]}" || true
    total=0
    for trace in "$still"/*.csv; do
        steps=$(steps_of "$trace")
        [ "$steps" -eq 0 ] || printf '%6s  %s\n' "$steps" "$(basename "$trace")"
        total=$((total + steps))
    done
    echo "never walked at $rate Hz: $total steps (a known limitation when not 0: Docs/Pedometer.md, \"What it cannot do\")"
done
exit $status
