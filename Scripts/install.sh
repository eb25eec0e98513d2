#!/usr/bin/env bash
# Installs motionctl with its man page, shell completions and udev rule: the one install path (Docs/CLI.md).
#
# Usage: Scripts/install.sh [--prefix DIR] [--destdir DIR]
#   --prefix DIR   where the files go (default /usr/local): DIR/bin/motionctl, DIR/share/man/man1/motionctl.1,
#                  DIR/share/bash-completion/completions/motionctl, DIR/share/zsh/site-functions/_motionctl,
#                  DIR/share/fish/vendor_completions.d/motionctl.fish; the udev rule goes to
#                  /etc/udev/rules.d/70-swift-motion.rules
#   --destdir DIR  stage everything under DIR (for packages and tests); without it (run as root) the system
#                  group 'iio' is created and udev reloaded, so the rule applies to devices present now
# It installs the build's system packages when missing (Scripts/install-system-packages.sh), builds motionctl
# in release mode, and generates the man page and completions from the built tool's argument parser.
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
echo "install: building motionctl (release)" >&2
swift build -c release --product motionctl
binary=.build/release/motionctl

generated="$(mktemp -d)"
trap 'rm -rf "$generated"' EXIT
# The page's date is the last commit's, so the same source always gives the same page.
day="$(git log -1 --format=%cs 2> /dev/null || date +%F)"
python3 Scripts/generate-manual.py "$binary" "$generated/motionctl.1" --date "$day"
"$binary" --generate-completion-script bash > "$generated/motionctl.bash"
"$binary" --generate-completion-script zsh > "$generated/_motionctl"
"$binary" --generate-completion-script fish > "$generated/motionctl.fish"

root="$destdir$prefix"
install -D -m 755 "$binary" "$root/bin/motionctl"
install -D -m 644 "$generated/motionctl.1" "$root/share/man/man1/motionctl.1"
install -D -m 644 "$generated/motionctl.bash" "$root/share/bash-completion/completions/motionctl"
install -D -m 644 "$generated/_motionctl" "$root/share/zsh/site-functions/_motionctl"
install -D -m 644 "$generated/motionctl.fish" "$root/share/fish/vendor_completions.d/motionctl.fish"
install -D -m 644 Support/udev/70-swift-motion.rules "$destdir/etc/udev/rules.d/70-swift-motion.rules"
echo "install: motionctl, its man page, bash/zsh/fish completions and the udev rule are in ${destdir:-/}" >&2

# On the live system: the group the rule grants the devices to, and the rule applied to present devices.
if [ -z "$destdir" ]; then
    groupadd --system --force iio
    if command -v udevadm > /dev/null && [ -d /run/udev ]; then
        udevadm control --reload && udevadm trigger --action=add --subsystem-match=iio || true
    fi
    echo "install: add users to the 'iio' group to read devices: usermod --append --groups iio USER" >&2
fi
