#!/usr/bin/env bash
# Builds the DocC catalog of every public module with --warnings-as-errors (symbol graphs from a debug build),
# then checks the public API against Docs/PublicAPI.txt (Scripts/public-api.py; `--update-api` rewrites it).
set -euo pipefail
cd "$(dirname "$0")/.."
graphs="$(mktemp -d)"
trap 'rm -rf "$graphs"' EXIT
swift build -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$graphs/all" > /dev/null
status=0
for module in MotionCore MotionAlgorithms MotionTrace MotionIIO MotionClient MotionStore MotionTesting Motion; do
    mkdir -p "$graphs/$module"
    cp "$graphs/all/$module.symbols.json" "$graphs/$module/"
    cp "$graphs/all/$module"@*.symbols.json "$graphs/$module/" 2>/dev/null || true
    if docc convert "Sources/$module/Documentation.docc" --additional-symbol-graph-dir "$graphs/$module" \
        --fallback-display-name "$module" --fallback-bundle-identifier "org.swift-motion.$module" \
        --output-path "$graphs/out-$module" --warnings-as-errors > "$graphs/$module.log" 2>&1; then
        echo "docs: $module ok"
    else
        echo "docs: $module has documentation warnings:" >&2
        grep -E "warning|error" "$graphs/$module.log" >&2 || cat "$graphs/$module.log" >&2
        status=1
    fi
done
if [ "${1:-}" = --update-api ]; then
    Scripts/public-api.py "$graphs/all" --update
else
    Scripts/public-api.py "$graphs/all" || status=1
fi
exit $status
