#!/usr/bin/env bash
# Publishing figures (issue 25; Docs/History.md, "Publishing figures"): a real mosquitto on 127.0.0.1, a QoS-1
# subscriber, release builds. Usage: Scripts/benchmark-publish.sh [outage|fleet|all] (default outage).
#
# outage: the release motionctl. Input: `motionctl simulate --scenario tumbling --sensors accel,gyro,mag --rate
# 100 --repeat 15` (63 000 samples: 10.5 minutes of three sensors at 100 Hz).
#   1. a broker outage: the whole input published with no broker (into the spool; exit 74 after --drain-timeout 0);
#   2. the broker comes back: `motionctl publish --spool` alone drains it; every sample must arrive;
#   3. the same input published with the broker up, end to end.
# Prints the CPU time of each run, samples per second per core, bytes per sample in the spool and on the wire.
#
# fleet: `motion-publish-fleet` (Benchmarks/PublishFleet): FLEET_DEVICES (1000) simulated devices in one process,
# each with its own spool and publisher, publishing the accelerometer at FLEET_RATE Hz (50) in messages of 0.5 s for
# FLEET_SECONDS (180), sensors FLEET_SENSORS (accel); the broker is stopped at OUTAGE_AT seconds (30) for
# OUTAGE_SECONDS (60) and started again. A ten-minute outage in wall time of one device with three sensors at 100 Hz:
#   FLEET_DEVICES=1 FLEET_RATE=100 FLEET_SENSORS=accel,gyro,mag FLEET_SECONDS=720 OUTAGE_SECONDS=600 \
#   Scripts/benchmark-publish.sh fleet
# A persistent subscriber checks every device's sequence numbers: every message once, no hole. Prints the
# broker's CPU and memory, the publishers' process's, and how long the fleet took to catch up after the outage.
set -euo pipefail
cd "$(dirname "$0")/.."
which="${1:-outage}"
case "$which" in outage | fleet | all) ;; *) echo "usage: $0 [outage|fleet|all]" >&2; exit 2 ;; esac
swift build -c release --product motionctl > /dev/null
swift build -c release --product motion-publish-fleet > /dev/null
motionctl="$PWD/.build/release/motionctl"
fleet="$PWD/.build/release/motion-publish-fleet"
work="$(mktemp -d)"
cleanup() {
    pkill -f "motion-publish-fleet.*$work" 2> /dev/null || true
    pkill -f "mosquitto -c $work" 2> /dev/null || true
    pkill -f "mosquitto_sub.*bench-sub-$$" 2> /dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
printf 'listener %s 127.0.0.1\nallow_anonymous true\n%s\n' "$port" "$( [ "$(id -u)" = 0 ] && echo 'user root' )" > "$work/mosquitto.conf"
outage_figures() {
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
}

# CPU seconds (user + system) and peak memory (MiB) of a process, from /proc.
usage_of() { echo "$(awk '{ printf "%.2f", ($14 + $15) / 100 }' "/proc/$1/stat") $(awk '/VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status")"; }

fleet_figures() {
    local devices="${FLEET_DEVICES:-1000}" rate="${FLEET_RATE:-50}" seconds="${FLEET_SECONDS:-180}"
    local outage_at="${OUTAGE_AT:-30}" outage_seconds="${OUTAGE_SECONDS:-60}" sensors="${FLEET_SENSORS:-accel}"
    printf 'persistence true\npersistence_location %s/\nmax_queued_messages 0\nmax_inflight_messages 100\n' "$work" \
        >> "$work/mosquitto.conf"
    mkdir -p "$work/spools"
    mosquitto -c "$work/mosquitto.conf" > "$work/broker.log" 2>&1 &
    local broker=$!
    sleep 0.5
    # The subscriber: each batch header's (stream, seq, records), through a filter that keeps only the headers.
    mosquitto_sub -h 127.0.0.1 -p "$port" -t 'fleet/+/+/samples' -q 1 -c -i "bench-sub-$$" \
        | grep --line-buffered -o '"stream":"[^"]*","seq":[0-9]*,"records":[0-9]*' > "$work/headers" &
    sleep 0.5
    local start=$SECONDS
    "$fleet" --broker "mqtt://127.0.0.1:$port" --topic fleet --spools "$work/spools" --devices "$devices" \
        --rate "$rate" --sensors "$sensors" --seconds "$seconds" --drain-timeout 600 > "$work/fleet.log" 2>&1 &
    local simulator=$!
    sleep "$outage_at"
    read -r cpu1 memory1 <<< "$(usage_of "$broker")"
    kill -TERM "$broker"
    wait "$broker" || true
    echo "broker stopped at $((SECONDS - start)) s (its CPU so far ${cpu1} s, peak ${memory1} MiB)"
    sleep "$outage_seconds"
    mosquitto -c "$work/mosquitto.conf" >> "$work/broker.log" 2>&1 &
    broker=$!
    local restarted=$SECONDS
    echo "broker started again at $((SECONDS - start)) s; waiting: $(tail -1 "$work/fleet.log")"
    # Every device connected again; caught up: also at most one message a device waiting (the usual in flight).
    local connected="" caught=""
    while kill -0 "$simulator" 2> /dev/null && [ -z "$caught" ]; do
        local line
        line="$(grep '^t=' "$work/fleet.log" | tail -1)"
        if [ -z "$connected" ] && awk -v d="$devices" '{ exit !($9 == d) }' <<< "$line"; then
            connected=$((SECONDS - restarted))
        fi
        if awk -v d="$devices" '{ exit !($9 == d && $7 <= d) }' <<< "$line"; then caught=$((SECONDS - restarted)); fi
        sleep 0.5
    done
    echo "after the broker came back: all connected in ${connected:-(not before the end)} s, caught up in ${caught:-(not before the end)} s"
    local status=0
    wait "$simulator" || status=$?
    sleep 2
    read -r cpu2 memory2 <<< "$(usage_of "$broker")"
    pkill -f "mosquitto_sub.*bench-sub-$$" || true
    sleep 0.5
    grep -v '^t=' "$work/fleet.log"
    local written
    written=$(sed -n 's/^generated: \([0-9]*\) messages.*/\1/p' "$work/fleet.log")
    awk -v written="$written" -F'[:,]' '{
            key = $2 " " $4
            if (key in seen) { twice++; next }
            seen[key] = 1; unique++; records += $6
            if ($4 + 1 > last[$2]) last[$2] = $4 + 1
            count[$2]++
        }
        END {
            for (s in last) { streams++; holes += last[s] - count[s] }
            printf "subscriber: %d messages (%d samples) from %d devices, %d twice, %d holes; %d written\n", unique, records, streams, twice, holes, written
            exit !(unique == written && holes == 0)
        }' "$work/headers" || { echo "the subscriber did not get every message" >&2; status=1; }
    echo "broker: $(awk -v a="$cpu1" -v b="$cpu2" 'BEGIN { printf "%.2f", a + b }') s CPU in all (before the outage ${cpu1} s, after ${cpu2} s); peak memory ${memory1} MiB, then ${memory2} MiB"
    kill -TERM "$broker"
    wait "$broker" || true
    return "$status"
}

if [ "$which" != fleet ]; then
    outage_figures
    pkill -f "mosquitto -c $work" 2> /dev/null || true
    pkill -f "mosquitto_sub.*bench-sub-$$" 2> /dev/null || true
    sleep 0.5
fi
[ "$which" = outage ] || fleet_figures
