#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages swift-motion needs, only those missing, and says which before it does.
# Used by Scripts/motionctl (the README's run command) and .ci/run, so both install the same list.
#
# Usage: Scripts/install-system-packages.sh [build|test]    (default: build)
#   build  what `swift build` needs: libiio-dev libudev-dev libsystemd-dev (motiond's sd-bus) libmosquitto-dev
#          (MQTT publishing) pkg-config
#   test   also what the tests use: umockdev and its headers, iio-sensor-proxy (with monitor-sensor), libiio-utils,
#          groff (man page check), librsvg2-bin (rsvg-convert renders `motionctl plot`'s SVG), and for motiond's tests dbus-daemon, systemd (busctl, systemd-analyze) and
#          libglib2.0-bin (gdbus), python3-dbusmock (polkit's stand-in); for iio-sensor-proxy's own integration
#          suite (Scripts/check-sensor-proxy-suite.sh) python3-dbus, python3-gi, gir1.2-umockdev-1.0, python3-psutil;
#          for the MQTT publisher's tests the mosquitto broker, mosquitto-clients (mosquitto_sub) and openssl (a
#          test CA for TLS)
# Exit status: 0 when everything is installed, 69 when packages are missing and cannot be installed here.
set -euo pipefail

build=(libiio-dev libudev-dev libsystemd-dev libmosquitto-dev pkg-config)
test=(umockdev libumockdev-dev iio-sensor-proxy libiio-utils groff-base librsvg2-bin dbus-daemon systemd libglib2.0-bin python3-dbusmock
    python3-dbus python3-gi gir1.2-umockdev-1.0 python3-psutil mosquitto mosquitto-clients openssl)
case "${1:-build}" in
    build) packages=("${build[@]}") ;;
    test) packages=("${build[@]}" "${test[@]}") ;;
    *) echo "usage: $0 [build|test]" >&2; exit 64 ;;
esac

if ! command -v dpkg-query > /dev/null; then
    echo "swift-motion: this is not a Debian-based system; install the equivalents of: ${packages[*]}" >&2
    exit 69
fi
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo > /dev/null; then
        echo "swift-motion: missing system packages: ${missing[*]}" >&2
        echo "swift-motion: as root, run: apt-get update && apt-get install ${missing[*]}" >&2
        exit 69
    fi
    sudo_cmd=(sudo)
fi
echo "swift-motion: installing the missing system packages with apt-get: ${missing[*]}" >&2
"${sudo_cmd[@]}" apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
