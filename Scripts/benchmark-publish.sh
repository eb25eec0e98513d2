#!/usr/bin/env bash
# Publishing figures (issue 25; Docs/History.md, "Publishing figures"): a real mosquitto on 127.0.0.1, a QoS-1
# subscriber, the release motionctl. Input: `motionctl simulate --scenario tumbling --sensors accel,gyro,mag --rate
# 100 --repeat 15` (63 000 samples: 10.5 minutes of three sensors at 100 Hz).
#   1. a broker outage: the whole input published with no broker (into the spool; exit 74 after --drain-timeout 0);
#   2. the broker comes back: `motionctl publish --spool` alone drains it; every sample must arrive;
#   3. the same input published with the broker up, end to end.
# Prints the CPU time of each run, samples per second per core, bytes per sample in the spool and on the wire.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product motionctl > /dev/null
motionctl="$PWD/.build/release/motionctl"
work="$(mktemp -d)"
cleanup() { pkill -f "mosquitto -c $work" 2> /dev/null || true; pkill -f "mosquitto_sub.*bench-sub-$$" 2> /dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
printf 'listener %s 127.0.0.1\nallow_anonymous true\n%s\n' "$port" "$( [ "$(id -u)" = 0 ] && echo 'user root' )" > "$work/mosquitto.conf"
"$motionctl" simulate --scenario tumbling --sensors accel,gyro,mag --rate 100 --repeat 15 --output "$work/input.csv"
samples=$(( $(grep -cv '^#' "$work/input.csv") - 1 ))
echo "input: $samples samples (accel, gyro, mag at 100 Hz)"
target=(--broker "mqtt://127.0.0.1:$port" --topic bench --spool "$work/spool")

cpu() { tail -1 "$1" | awk '{ printf "%.2f s CPU (user %s s, system %s s), %.2f s wall", $2 + $3, $2, $3, $1 }'; }
rate() { tail -1 "$1" | awk -v n="$2" '{ printf "%.0f", n / ($2 + $3) }'; }

# 1. The outage: everything goes to the spool.
set +e
/usr/bin/time -f "%e %U %S" -o "$work/time1" "$motionctl" publish --trace "$work/input.csv" --speed max \
    --drain-timeout 0 "${target[@]}" 2> "$work/log1"
status=$?
set -e
[ "$status" = 74 ] || { cat "$work/log1"; echo "expected status 74 without a broker, got $status" >&2; exit 1; }
spooled=$(du -cb "$work"/spool/segment-* | tail -1 | cut -f1)
echo "1. outage: spooled $spooled bytes ($(awk -v b="$spooled" -v n="$samples" 'BEGIN { printf "%.1f", b / n }') bytes a sample) in $(cpu "$work/time1")"

# 2. The broker and a subscriber come back; the spool drains.
mosquitto -c "$work/mosquitto.conf" > "$work/broker.log" 2>&1 &
sleep 0.5
mosquitto_sub -h 127.0.0.1 -p "$port" -t 'bench/#' -q 1 -i "bench-sub-$$" > "$work/received" &
sleep 0.5
/usr/bin/time -f "%e %U %S" -o "$work/time2" "$motionctl" publish --drain-timeout 600 "${target[@]}" 2> "$work/log2"
for _ in $(seq 1 100); do
    [ "$(grep -c '"type":"sample"' "$work/received")" -ge "$samples" ] && break
    sleep 0.1
done
received=$(grep -c '"type":"sample"' "$work/received")
unique=$(grep '"type":"sample"' "$work/received" | sort -u | wc -l)
wire=$(grep -v '"type":"batch"' "$work/received" | wc -c)
echo "2. drain: $received samples received ($unique different) of $samples, $(awk -v b="$wire" -v n="$received" 'BEGIN { printf "%.1f", b / n }') payload bytes a sample, in $(cpu "$work/time2"): $(rate "$work/time2" "$samples") samples/s per core"
[ "$unique" = "$samples" ] || { echo "samples lost: $unique of $samples" >&2; exit 1; }

# 3. End to end with the broker up.
: > "$work/received"
rm -rf "$work/spool"
/usr/bin/time -f "%e %U %S" -o "$work/time3" "$motionctl" publish --trace "$work/input.csv" --speed max "${target[@]}" 2> "$work/log3"
for _ in $(seq 1 100); do
    [ "$(grep -c '"type":"sample"' "$work/received")" -ge "$samples" ] && break
    sleep 0.1
done
echo "3. end to end: $(grep -c '"type":"sample"' "$work/received") samples received, $(cpu "$work/time3"): $(rate "$work/time3" "$samples") samples/s per core (reading the trace, spooling, sending)"
