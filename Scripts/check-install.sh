#!/usr/bin/env bash
# Installs into a staging folder with Scripts/install.sh and checks what a user gets: the binary runs, the man
# page renders without warnings and documents every command with its units intact, the bash completion offers
# subcommands and option values, and every file is where the install path says; for the service motiond: the
# unit passes `systemd-analyze verify` and rates 2.0 or below in `systemd-analyze security`, the sysusers file
# creates the user and groups, the D-Bus policy works on a private bus with the system bus's default rules (root
# owns the names, others cannot, everyone may call), and the staged motiond serves there under
# MemoryDenyWriteExecute's kernel equivalent. Used by .ci/run.
# Needs root (it runs motiond as root and clients as nobody), dbus-daemon, busctl, systemd-analyze, setpriv.
#
# Usage: Scripts/check-install.sh [--staged DIR]
#   --staged DIR  check what an earlier `Scripts/install.sh --prefix /usr --destdir DIR` staged (no build)
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -KILL "$pid" 2> /dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
if [ "${1:-}" = --staged ]; then
    stage="$2"
else
    stage="$work/stage"
    Scripts/install.sh --prefix /usr --destdir "$stage" 2> "$work/install.log" \
        || { cat "$work/install.log" >&2; exit 1; }
fi
root="$stage/usr"
failures=0
fail() { echo "check-install: $*" >&2; failures=$((failures + 1)); }

for file in bin/motionctl share/man/man1/motionctl.1 share/bash-completion/completions/motionctl \
    share/zsh/site-functions/_motionctl share/fish/vendor_completions.d/motionctl.fish; do
    [ -s "$root/$file" ] || fail "missing $file"
done
cmp -s Support/udev/70-swift-motion.rules "$stage/etc/udev/rules.d/70-swift-motion.rules" || fail "udev rule missing"
"$root/bin/motionctl" --version | grep -q '^motionctl [0-9]' || fail "installed motionctl --version"

page="$root/share/man/man1/motionctl.1"
warnings="$(groff -mandoc -Tutf8 -ww -z "$page" 2>&1)"
[ -z "$warnings" ] || fail "man page warnings: $warnings"
rendered="$(groff -mandoc -Tutf8 -P-c "$page" 2> /dev/null | sed 's/.\x08//g')"
for command in stream attitude simulate orientation shake devices record settings info plot; do
    grep -q "motionctl $command\$" <<< "$rendered" || fail "man page has no section for $command"
done
grep -q 'magnetic field in µT' <<< "$rendered" || fail "man page lost the µ of µT"
grep -q 'y = α·x + (1−α)·y_prev' <<< "$rendered" || fail "man page lost the low-pass formula"

offers() {  # offers WORD... : what bash completes for the last word, one line
    bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"
        COMP_POINT=${#COMP_LINE}; _motionctl motionctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
        echo "${COMPREPLY[*]}"' _ "$root/share/bash-completion/completions/motionctl" "$@"
}
[[ " $(offers motionctl stre) " == *" stream "* ]] || fail "bash completion does not offer 'stream'"
[[ "$(offers motionctl attitude --frame '')" == "arbitrary arbitrary-corrected magnetic-north true-north" ]] \
    || fail "bash completion does not offer the frames: $(offers motionctl attitude --frame '')"
grep -q '^#compdef motionctl' "$root/share/zsh/site-functions/_motionctl" || fail "zsh completion header"
# File arguments complete files: --trace offers .csv files and folders, --output also .jsonl files.
files="$work/completion"
mkdir -p "$files/sub"
touch "$files/a.csv" "$files/b.jsonl" "$files/c.txt"
[[ "$(offers motionctl stream --trace "$files/" | tr ' ' '\n' | sort | tr '\n' ' ')" == "$files/a.csv $files/sub " ]] \
    || fail "bash completion of --trace: $(offers motionctl stream --trace "$files/")"
[[ "$(offers motionctl simulate --output "$files/" | tr ' ' '\n' | sort | tr '\n' ' ')" \
    == "$files/a.csv $files/b.jsonl $files/sub " ]] \
    || fail "bash completion of --output: $(offers motionctl simulate --output "$files/")"
grep -qF "_files -g '\''*.csv'\''" "$root/share/zsh/site-functions/_motionctl" || fail "zsh completion of --trace files"
grep -qF "*.\\'csv\\'" "$root/share/fish/vendor_completions.d/motionctl.fish" || fail "fish completion of --trace files"

# motiond's man page (section 8) and completions, as motionctl's.
for file in share/man/man8/motiond.8 share/bash-completion/completions/motiond share/zsh/site-functions/_motiond \
    share/fish/vendor_completions.d/motiond.fish; do
    [ -s "$root/$file" ] || fail "missing $file"
done
daemon_page="$root/share/man/man8/motiond.8"
warnings="$(groff -mandoc -Tutf8 -ww -z "$daemon_page" 2>&1)"
[ -z "$warnings" ] || fail "motiond man page warnings: $warnings"
rendered="$(groff -mandoc -Tutf8 -P-c "$daemon_page" 2> /dev/null | sed 's/.\x08//g')"
for option in --claim-timeout --high-rate-group --polkit --state-directory; do
    grep -q -- "$option" <<< "$rendered" || fail "motiond man page does not document $option"
done
grep -q '^#compdef motiond' "$root/share/zsh/site-functions/_motiond" || fail "motiond zsh completion header"
daemon_offers="$(bash -c 'source "$1"; COMP_WORDS=(motiond --pol); COMP_CWORD=1; COMP_LINE="motiond --pol"
    COMP_POINT=${#COMP_LINE}; _motiond motiond --pol motiond; echo "${COMPREPLY[*]}"' _ \
    "$root/share/bash-completion/completions/motiond")"
[[ "$daemon_offers" == "--polkit" ]] || fail "motiond bash completion does not offer --polkit: $daemon_offers"
# Both binaries report their version the same way.
for tool in motionctl motiond; do
    "$root/bin/$tool" --version | sed -n 1p | grep -qx "$tool [0-9][0-9.]* (swift-motion)" || fail "$tool --version"
    [ "$("$root/bin/$tool" --version | sed 1d)" = "$("$root/bin/motionctl" --version | sed 1d)" ] \
        || fail "$tool --version does not list the libraries as motionctl does"
done

# motiond and its service files, where install.sh says.
unit="$stage/usr/lib/systemd/system/motiond.service"
sysusers="$stage/usr/lib/sysusers.d/motiond.conf"
policy="$stage/usr/share/dbus-1/system.d/org.swiftmotion.Motion1.conf"
activation="$stage/usr/share/dbus-1/system-services"
[ -x "$root/bin/motiond" ] || fail "missing bin/motiond"
[ -s "$unit" ] || fail "missing /usr/lib/systemd/system/motiond.service"
cmp -s Support/systemd/motiond.sysusers "$sysusers" || fail "missing or changed /usr/lib/sysusers.d/motiond.conf"
cmp -s Support/dbus/org.swiftmotion.Motion1.conf "$policy" || fail "missing or changed D-Bus policy $policy"
polkit_policy="$stage/usr/share/polkit-1/actions/org.swiftmotion.Motion1.policy"
cmp -s Support/polkit/org.swiftmotion.Motion1.policy "$polkit_policy" || fail "missing or changed polkit actions"
# The actions motiond asks polkit about (Sources/MotionService/PolkitAuthorizer.swift) are the ones declared.
declared="$(python3 -c 'import sys, xml.etree.ElementTree as t; print(" ".join(sorted(a.get("id") for a in t.parse(sys.argv[1]).getroot().iter("action"))))' "$polkit_policy" 2>&1)" \
    || fail "polkit actions do not parse: $declared"
[ "$declared" = "net.hadess.SensorProxy.claim-sensor org.swiftmotion.Motion1.claim-sensor org.swiftmotion.Motion1.high-rate" ] \
    || fail "polkit actions declared: $declared"
for name in net.hadess.SensorProxy org.swiftmotion.Motion1; do
    cmp -s "Support/dbus/$name.service" "$activation/$name.service" || fail "missing D-Bus activation $name.service"
done
grep -qx 'ExecStart=/usr/bin/motiond' "$unit" || fail "motiond.service: ExecStart is not the installed binary" \
    "/usr/bin/motiond: $(grep '^ExecStart' "$unit")"
help="$(timeout 10 "$root/bin/motiond" --help 2>&1)" || fail "the staged motiond --help failed: $help"
grep -q 'net.hadess.SensorProxy' <<< "$help" || fail "the staged motiond --help does not name net.hadess.SensorProxy"
# Settings that would break motiond (see the unit's comments): a private /dev never gets hotplugged devices, a
# private network no udev events, and PrivateUsers= maps the group that opens the device nodes to nobody.
for setting in PrivateDevices PrivateNetwork PrivateUsers; do
    if grep -q "^$setting=" "$unit"; then
        fail "motiond.service sets $setting=, which breaks motiond (see the unit's comments)"
    fi
done
# A read-only /sys keeps a capture from writing its device's attributes, and a device policy without the IIO
# devices from opening /dev/iio:deviceN.
if grep -q '^ProtectKernelTunables=\(true\|yes\)' "$unit" && ! grep -qx 'ReadWritePaths=/sys/devices' "$unit"; then
    fail "motiond.service has ProtectKernelTunables= without ReadWritePaths=/sys/devices: a capture writes there"
fi
if grep -q '^DevicePolicy=' "$unit" && ! grep -qx 'DeviceAllow=char-iio rw' "$unit"; then
    fail "motiond.service has DevicePolicy= without DeviceAllow=char-iio rw: /dev/iio:deviceN would be refused"
fi

# systemd-analyze verify on the unit with ExecStart on the staged binary (verify checks that it is executable),
# beside the system's units with iio-sensor-proxy.service masked, as Docs/Service.md has it. It exits 1 for some errors (a missing
# ExecStart) but only warns for others (Type=dbuz), so any output fails too.
units="$work/units"
mkdir "$units"
sed "s|^ExecStart=/usr/bin/motiond|ExecStart=$root/bin/motiond|" "$unit" > "$units/motiond.service"
ln -s /dev/null "$units/iio-sensor-proxy.service"
if ! verify="$(SYSTEMD_UNIT_PATH="$units:" timeout 60 systemd-analyze verify "$units/motiond.service" 2>&1)" \
    || [ -n "$verify" ]; then
    fail "systemd-analyze verify motiond.service: ${verify:-exit status not 0}"
fi
# The same copy's exposure as `systemd-analyze security` rates it: 2.0 at most (iio-sensor-proxy's unit: 7.7).
# --offline (systemd 250+) reads the file instead of asking a running systemd, which a container lacks.
if ! systemd-analyze --help 2> /dev/null | grep -q -- '--offline'; then
    message="systemd-analyze has no --offline (systemd 250+): the exposure level of motiond.service is not checked"
    if [ "${CI:-}" = true ]; then fail "$message"; else echo "check-install: $message" >&2; fi
else
    security="$(SYSTEMD_UNIT_PATH="$units:" timeout 60 systemd-analyze security --offline=true --no-pager \
        "$units/motiond.service" 2>&1 || true)"
    exposure="$(sed -n 's/.*Overall exposure level for motiond\.service: \([0-9][0-9.]*\).*/\1/p' <<< "$security")"
    if [ -z "$exposure" ]; then
        fail "systemd-analyze security --offline=true gave no exposure level for motiond.service: $security"
    elif awk -v exposure="$exposure" 'BEGIN { exit !(exposure > 2.0) }'; then
        fail "systemd-analyze security rates motiond.service $exposure, above 2.0; exposed:" \
            "$(grep '✗' <<< "$security")"
    fi
fi

# The sysusers file, applied to an empty root: user motiond in group iio, groups iio and motion.
sysroot="$work/sysroot"
mkdir -p "$sysroot/etc"
if sysusers_out="$(timeout 30 systemd-sysusers --root="$sysroot" "$sysusers" 2>&1)"; then
    grep -q '^motiond:x:[0-9]*:[0-9]*:.*:/:/usr/sbin/nologin$' "$sysroot/etc/passwd" \
        || fail "sysusers: no system user motiond with home / and nologin: $(cat "$sysroot/etc/passwd")"
    grep -q '^motion:' "$sysroot/etc/group" || fail "sysusers: no group motion"
    awk -F: '$1 == "iio" { print $4 }' "$sysroot/etc/group" | tr , '\n' | grep -qx motiond \
        || fail "sysusers: motiond is not a member of iio: $(grep '^iio:' "$sysroot/etc/group")"
else
    fail "systemd-sysusers --root rejected motiond.conf: $sysusers_out"
fi

# The D-Bus policy on a private bus with the system bus's policies (/usr/share/dbus-1/system.conf: nobody may own
# a name or send a method call unless a file allows it) and the staged files. Without a user motiond here, the
# policy's motiond rules are also checked on a copy that names the user daemon instead.
owner=motiond
policies=("$policy")
if ! getent passwd motiond > /dev/null; then
    owner=daemon
    sed 's/user="motiond"/user="daemon"/' "$policy" > "$work/policy-daemon.conf"
    policies+=("$work/policy-daemon.conf")
fi
chmod 711 "$work"  # uid 65534 reaches the socket, nothing else
mkdir -m 755 "$work/bus"
python3 - "$work/bus" "$activation" "${policies[@]}" > "$work/bus.conf" <<'PY'
import sys, xml.etree.ElementTree as ET
bus, services, *includes = sys.argv[1:]
system = ET.parse("/usr/share/dbus-1/system.conf").getroot()
print('<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"\n'
      ' "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">\n<busconfig>')
print(f"  <listen>unix:dir={bus}</listen>\n  <auth>EXTERNAL</auth>\n  <servicedir>{services}</servicedir>")
for policy in system.findall("policy"):
    print(ET.tostring(policy, encoding="unicode"))
for include in includes:
    print(f"  <include>{include}</include>")
print("</busconfig>")
PY
dbus-daemon --config-file="$work/bus.conf" --nofork --nosyslog --print-address=3 3> "$work/address" \
    2> "$work/dbus.log" &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/address" ] || ! kill -0 "${pids[-1]}" 2> /dev/null && break; sleep 0.1; done
address="$(head -1 "$work/address")"
bus() { timeout 15 busctl --address="$address" --timeout=10 "$@" 2>&1 || true; }
as() { local user="$1"; shift; setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups "$@"; }
owns() {  # owns USER NAME: RequestName's answer (1: primary owner), or the bus's error with its reason
    as "$1" timeout 15 gdbus call --address "$address" --timeout 10 --dest org.freedesktop.DBus \
        --object-path /org/freedesktop/DBus --method org.freedesktop.DBus.RequestName "$2" 0 2>&1 || true
}
if [ -z "$address" ]; then
    fail "dbus-daemon did not accept the policy within 10 s: $(cat "$work/dbus.log")"
else
    # dbus-daemon skips rules for users that do not exist with a warning; any other line is a problem.
    # (In a container it may also fail to raise its file limit.)
    log="$(grep -v 'Unknown username "motiond"\|Failed to set fd limit' "$work/dbus.log" || true)"
    [ -z "$log" ] || fail "dbus-daemon warned about the policy: $log"
    [[ "$(as nobody timeout 15 busctl --address="$address" --timeout=10 call org.freedesktop.DBus \
        /org/freedesktop/DBus org.freedesktop.DBus GetId 2>&1 || true)" == s* ]] || fail "uid 65534 cannot use the bus"
    for name in net.hadess.SensorProxy org.swiftmotion.Motion1; do
        [ "$(owns root "$name")" = "(uint32 1,)" ] || fail "root cannot own $name: $(owns root "$name")"
        [ "$(owns "$owner" "$name")" = "(uint32 1,)" ] \
            || fail "user $owner cannot own $name: $(owns "$owner" "$name")"
        [[ "$(owns nobody "$name")" == *"not allowed to own"* ]] \
            || fail "uid 65534 is not refused $name: $(owns nobody "$name")"
    done
    activatable="$(bus call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus ListActivatableNames)"
    for name in net.hadess.SensorProxy org.swiftmotion.Motion1; do
        [[ "$activatable" == *"\"$name\""* ]] || fail "dbus-daemon cannot activate $name: $activatable"
    done

    # The staged motiond serves there, as root, under the kernel's no-write-and-execute rule (PR_SET_MDWE, what
    # MemoryDenyWriteExecute=true asks; Linux 6.3+), and a client as uid 65534 reaches what the policy opens.
    mdwe='import ctypes, os, sys
if ctypes.CDLL(None).prctl(65, 1, 0, 0, 0) != 0: print("no PR_SET_MDWE", file=sys.stderr)
os.execvp(sys.argv[1], sys.argv[1:])'
    if python3 -c "$mdwe" python3 -c 'import mmap; mmap.mmap(-1, 4096, prot=7)' 2> /dev/null; then
        echo "check-install: this kernel has no PR_SET_MDWE: motiond not run under MemoryDenyWriteExecute" >&2
    fi
    DBUS_SYSTEM_BUS_ADDRESS="$address" python3 -c "$mdwe" "$root/bin/motiond" --claim-timeout 5 \
        > "$work/motiond.log" 2>&1 &
    motiond=$!
    pids+=($motiond)
    for _ in $(seq 100); do
        [ "$(bus call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus NameHasOwner s \
            net.hadess.SensorProxy)" = "b true" ] || ! kill -0 $motiond 2> /dev/null && break
        sleep 0.1
    done
    client() { as nobody timeout 15 busctl --address="$address" --timeout=10 "$@" 2>&1 || true; }
    proxy=(net.hadess.SensorProxy /net/hadess/SensorProxy)
    compass=(net.hadess.SensorProxy /net/hadess/SensorProxy/Compass)
    if ! kill -0 $motiond 2> /dev/null; then
        fail "the staged motiond did not start: $(cat "$work/motiond.log")"
    else
        out="$(client get-property "${proxy[@]}" net.hadess.SensorProxy HasAccelerometer)"
        [[ "$out" == "b "* ]] || fail "uid 65534 cannot read HasAccelerometer: $out"
        out="$(client get-property "${compass[@]}" net.hadess.SensorProxy.Compass HasCompass)"
        [[ "$out" == "b "* ]] || fail "uid 65534 cannot read HasCompass: $out"
        out="$(client introspect "${compass[@]}")"
        [[ "$out" == *ClaimCompass* ]] || fail "uid 65534 cannot introspect the compass: $out"
        # Success, or the service's own error (no reading in time): the call went through the policy.
        out="$(client call "${proxy[@]}" net.hadess.SensorProxy ClaimAccelerometer)"
        [[ -z "$out" || "$out" == *"no reading"* ]] || fail "uid 65534 cannot claim the accelerometer: $out"
        out="$(client call "${compass[@]}" net.hadess.SensorProxy.Compass ClaimCompass)"
        [[ -z "$out" || "$out" == *"no reading"* ]] || fail "uid 65534 cannot claim the compass: $out"
        out="$(client call "${proxy[@]}" net.hadess.SensorProxy ReleaseAccelerometer)"
        [[ "$out" == *"has not claimed the accelerometer"* ]] || fail "ReleaseAccelerometer without a claim: $out"
        out="$(client call "${proxy[@]}" org.example.NotOpened Anything)"
        [[ "$out" == *"Access denied"* || "$out" == *"ejected send message"* ]] \
            || fail "uid 65534 was not refused an interface the policy does not open: $out"
        kill -TERM $motiond
        for _ in $(seq 100); do kill -0 $motiond 2> /dev/null || break; sleep 0.1; done
        if kill -0 $motiond 2> /dev/null; then
            fail "motiond did not stop within 10 s of SIGTERM: $(cat "$work/motiond.log")"
        elif ! wait $motiond; then
            fail "motiond did not exit 0 on SIGTERM: $(cat "$work/motiond.log")"
        fi
    fi
fi

[ "$failures" -eq 0 ] || exit 1
echo "check-install: motionctl, man page, completions, udev rule, motiond and its service files install and work"
