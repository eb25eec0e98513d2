#!/usr/bin/env bash
# Installs into a staging folder with Scripts/install.sh and checks what a user gets: the binary runs, the man
# page renders without warnings and documents every command with its units intact, the bash completion offers
# subcommands and option values, and every file is where the install path says. Used by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
Scripts/install.sh --prefix /usr --destdir "$stage" 2> "$stage.log" || { cat "$stage.log" >&2; exit 1; }
rm -f "$stage.log"
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
for command in stream attitude simulate orientation shake devices record settings; do
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

[ "$failures" -eq 0 ] || exit 1
echo "check-install: motionctl, man page, completions and udev rule install and work"
