#!/usr/bin/env bash
# Installs motionctl with its man page, shell completions and udev rule, and the motion service motiond with its
# systemd unit, system user and D-Bus files: the one install path (Docs/CLI.md, Docs/Service.md).
#
# Usage: Scripts/install.sh [--prefix DIR] [--destdir DIR]
#   --prefix DIR   where the programs go (default /usr/local): DIR/bin/motionctl, DIR/bin/motiond,
#                  DIR/share/man/man1/motionctl.1, DIR/share/bash-completion/completions/motionctl,
#                  DIR/share/zsh/site-functions/_motionctl, DIR/share/fish/vendor_completions.d/motionctl.fish,
#                  and the same for motiond: DIR/share/man/man8/motiond.8 and its three completions.
#                  The system's files go where udev, systemd and dbus-daemon read them, whatever the prefix:
#                  /etc/udev/rules.d/70-swift-motion.rules, /usr/lib/systemd/system/motiond.service (its ExecStart
#                  is DIR/bin/motiond), /usr/lib/sysusers.d/motiond.conf,
#                  /usr/share/dbus-1/system.d/org.swiftmotion.Motion1.conf (policy) and
#                  /usr/share/dbus-1/system-services/{net.hadess.SensorProxy,org.swiftmotion.Motion1}.service,
#                  /usr/share/polkit-1/actions/org.swiftmotion.Motion1.policy
#   --destdir DIR  stage everything under DIR (for packages and tests); without it (run as root) the system
#                  groups 'iio' and 'motion' and the user 'motiond' are created, udev reloaded (so the rule
#                  applies to devices present now), and systemd and dbus-daemon reloaded when they run.
#                  It neither enables nor starts motiond: replacing iio-sensor-proxy is the admin's choice
#                  (Docs/Service.md, "Replacing iio-sensor-proxy").
# It installs the build's system packages when missing (Scripts/install-system-packages.sh), builds motionctl
# and motiond in release mode, and generates the man page and completions from the built tool's argument parser.
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=/usr/local
destdir=
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="$2"; shift 2 ;;
        --destdir) destdir="$2"; shift 2 ;;
        *) echo "usage: $0 [--prefix DIR] [--destdir DIR]" >&2; exit 64 ;;
    esac
done

Scripts/install-system-packages.sh build
echo "install: building motionctl and motiond (release)" >&2
swift build -c release --product motionctl
swift build -c release --product motiond
binary=.build/release/motionctl

generated="$(mktemp -d)"
trap 'rm -rf "$generated"' EXIT
# The page's date is the last commit's, so the same source always gives the same page.
day="$(git log -1 --format=%cs 2> /dev/null || date +%F)"
python3 Scripts/generate-manual.py "$binary" "$generated/motionctl.1" --date "$day"
"$binary" --generate-completion-script bash > "$generated/motionctl.bash"
"$binary" --generate-completion-script zsh > "$generated/_motionctl"
"$binary" --generate-completion-script fish > "$generated/motionctl.fish"
daemon=.build/release/motiond
python3 Scripts/generate-manual.py "$daemon" "$generated/motiond.8" --date "$day" --section 8
"$daemon" --generate-completion-script bash > "$generated/motiond.bash"
"$daemon" --generate-completion-script zsh > "$generated/_motiond"
"$daemon" --generate-completion-script fish > "$generated/motiond.fish"

root="$destdir$prefix"
install -D -m 755 "$binary" "$root/bin/motionctl"
install -D -m 644 "$generated/motionctl.1" "$root/share/man/man1/motionctl.1"
install -D -m 644 "$generated/motionctl.bash" "$root/share/bash-completion/completions/motionctl"
install -D -m 644 "$generated/_motionctl" "$root/share/zsh/site-functions/_motionctl"
install -D -m 644 "$generated/motionctl.fish" "$root/share/fish/vendor_completions.d/motionctl.fish"
install -D -m 644 Support/udev/70-swift-motion.rules "$destdir/etc/udev/rules.d/70-swift-motion.rules"
echo "install: motionctl, its man page, bash/zsh/fish completions and the udev rule are in ${destdir:-/}" >&2

# The service: the binary, its unit (ExecStart is where the binary is on the target system, without destdir),
# its user and groups, its D-Bus policy and activation files.
install -D -m 755 "$daemon" "$root/bin/motiond"
install -D -m 644 "$generated/motiond.8" "$root/share/man/man8/motiond.8"
install -D -m 644 "$generated/motiond.bash" "$root/share/bash-completion/completions/motiond"
install -D -m 644 "$generated/_motiond" "$root/share/zsh/site-functions/_motiond"
install -D -m 644 "$generated/motiond.fish" "$root/share/fish/vendor_completions.d/motiond.fish"
sed "s|@bindir@|$prefix/bin|g" Support/systemd/motiond.service > "$generated/motiond.service"
if grep -q '@[a-z]*@' "$generated/motiond.service"; then
    echo "install: motiond.service still has a placeholder: $(grep '@[a-z]*@' "$generated/motiond.service")" >&2
    exit 1
fi
install -D -m 644 "$generated/motiond.service" "$destdir/usr/lib/systemd/system/motiond.service"
install -D -m 644 Support/systemd/motiond.sysusers "$destdir/usr/lib/sysusers.d/motiond.conf"
install -D -m 644 Support/polkit/org.swiftmotion.Motion1.policy \
    "$destdir/usr/share/polkit-1/actions/org.swiftmotion.Motion1.policy"
install -D -m 644 Support/dbus/org.swiftmotion.Motion1.conf \
    "$destdir/usr/share/dbus-1/system.d/org.swiftmotion.Motion1.conf"
for name in net.hadess.SensorProxy org.swiftmotion.Motion1; do
    install -D -m 644 "Support/dbus/$name.service" "$destdir/usr/share/dbus-1/system-services/$name.service"
done
echo "install: motiond ($prefix/bin/motiond, its man page and completions), motiond.service, sysusers motiond.conf, the D-Bus policy" \
    "org.swiftmotion.Motion1.conf and the activation of net.hadess.SensorProxy and org.swiftmotion.Motion1" \
    "are in ${destdir:-/}" >&2

# On the live system: the users and groups, the rule applied to present devices, and the daemons told about the
# new files. systemctl and dbus reloads only where systemd is PID 1 and the system bus runs (not in containers).
if [ -z "$destdir" ]; then
    if command -v systemd-sysusers > /dev/null; then
        systemd-sysusers /usr/lib/sysusers.d/motiond.conf
        echo "install: systemd-sysusers: groups iio, motion and user motiond (member of iio) exist" >&2
    else
        groupadd --system --force iio
        groupadd --system --force motion
        id motiond > /dev/null 2>&1 || useradd --system --user-group --no-create-home --home-dir / \
            --shell /usr/sbin/nologin --comment "swift-motion motion service" motiond
        usermod --append --groups iio motiond
        echo "install: groupadd/useradd: groups iio, motion and user motiond (member of iio) exist" >&2
    fi
    if command -v udevadm > /dev/null && [ -d /run/udev ]; then
        udevadm control --reload && udevadm trigger --action=add --subsystem-match=iio || true
        echo "install: udev rules reloaded and applied to the IIO devices present" >&2
    fi
    if [ -d /run/systemd/system ]; then
        systemctl daemon-reload
        echo "install: systemd reloaded (motiond.service known)" >&2
    else
        echo "install: systemd is not running: no daemon-reload" >&2
    fi
    if [ -S /run/dbus/system_bus_socket ] && command -v busctl > /dev/null \
        && busctl --timeout=10 call org.freedesktop.DBus / org.freedesktop.DBus ReloadConfig > /dev/null 2>&1; then
        echo "install: the system bus reloaded its configuration (policy and activation files)" >&2
    else
        echo "install: no system bus to reload (or no answer within 10 s): the policy applies when it starts" >&2
    fi
    echo "install: add users to the 'iio' group to read devices directly: usermod --append --groups iio USER" >&2
    echo "install: add users to the 'motion' group for motiond's raw samples above 25 Hz:" \
        "usermod --append --groups motion USER" >&2
    echo "install: to run motiond instead of iio-sensor-proxy:" \
        "systemctl mask --now iio-sensor-proxy && systemctl enable --now motiond (Docs/Service.md)" >&2
fi
