#!/usr/bin/env bash
# Runs iio-sensor-proxy's own upstream integration suite (release 3.9, in ../shared/reference/iio-sensor-proxy-tests)
# against motiond, as its drop-in: every accelerometer case of the IIO drivers, the compass case, and the fake
# light sensor's claim case (the claims of net.hadess.SensorProxy are made in all of them). Its own
# tests decide, with one exception: assertions on iio-sensor-proxy's debug log text (`have_text_in_log(...)`,
# such as "Found IIO poll accelerometer") are about its messages, not its behaviour, and are not checked (a
# runner module below replaces have_text_in_log by a value that matches anything and lists what it skipped).
# Everything else is checked: the D-Bus properties, the orientations and tilts of the recorded scans, the claims
# (under the suite's python-dbusmock polkitd, which allows net.hadess.SensorProxy.claim-sensor only), and the
# sysfs attributes the daemon writes (the sampling frequency set at start, the scan elements enabled).
#
# motiond runs with --orientation-rules iio-sensor-proxy: its default rules are debounced on purpose
# (Docs/Service.md), and the suite checks iio-sensor-proxy's exact, undebounced rules.
#
# The suite is GPL and is not part of this project: it is copied to a temporary folder at run time (it must be
# writable) and run from there. How: `top_builddir=B umockdev-wrapper python3 …` where B/src/iio-sensor-proxy
# execs motiond and B/src/monitor-sensor is Debian's (../shared/reference/iio-sensor-proxy-tests/README.md).
#
# Usage: Scripts/check-sensor-proxy-suite.sh [--motiond PATH] [--shared DIR] [CASE…]
#   --motiond PATH  the motiond to test (default: built with `swift build --product motiond`)
#   --shared DIR    the shared folder (default: ../shared)
#   CASE…           test_… names (default: the list below)
# Needs (Scripts/install-system-packages.sh test): umockdev, gir1.2-umockdev-1.0, python3-gi, python3-dbus,
# python3-dbusmock, python3-psutil, dbus-daemon, iio-sensor-proxy (for monitor-sensor). Takes about 12 s.
# Not run: the light and proximity cases of real drivers (hwmon, IIO, input) and the input-subsystem accelerometer
# (test_input_accel): motiond reads IIO motion sensors only, and reports light and proximity absent.
# Prints one line per case and a count; exits 1 when a case fails, 69 when the suite or a package is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

motiond=""
shared="../shared"
while [ $# -gt 0 ]; do
    case "$1" in
        --motiond) motiond="$2"; shift 2 ;;
        --shared) shared="$2"; shift 2 ;;
        --*) echo "usage: $0 [--motiond PATH] [--shared DIR] [CASE…]" >&2; exit 64 ;;
        *) break ;;
    esac
done
cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
    cases=(
        # accelerometer (poll and buffer drivers, scales, sampling frequency, base location, claims)
        test_iio_poll_accel test_iio_buffer_accel test_driver_buffer_without_trigger test_iio_broken_buffer_accel
        test_iio_scale_decimal_separator test_iio_scale_decimal_separator_offset test_iio_scale_decimal_separator2
        test_sampling_freq_available_integer test_sampling_freq_available_double test_iio_accel_base_location
        test_unrequested_readings
        # compass
        test_fake_compass
        # light (iio-sensor-proxy's fake light sensor): claims and their release
        test_fake_light
    )
fi

suite="$shared/reference/iio-sensor-proxy-tests"
if [ ! -f "$suite/tests/integration-test.py" ]; then
    echo "check-sensor-proxy-suite: $suite/tests/integration-test.py not found (pass --shared DIR)" >&2
    exit 69
fi
python=/usr/bin/python3  # Debian's, where python3-gi and python3-dbusmock are installed
if ! "$python" -c "import dbus, dbusmock, psutil, gi; gi.require_version('UMockdev', '1.0')" 2> /dev/null \
    || ! command -v umockdev-wrapper > /dev/null || [ ! -x /usr/bin/monitor-sensor ]; then
    echo "check-sensor-proxy-suite: missing packages: run Scripts/install-system-packages.sh test" >&2
    exit 69
fi
if [ -z "$motiond" ]; then
    swift build --product motiond > /dev/null
    motiond="$(swift build --show-bin-path)/motiond"
fi
motiond="$(realpath "$motiond")"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r "$suite/tests" "$work/tests"
chmod -R u+w "$work/tests"

# B/src: what the suite starts as its daemon and its client.
mkdir -p "$work/B/src"
cat > "$work/B/src/iio-sensor-proxy" << EOF
#!/usr/bin/env bash
# motiond in the place of iio-sensor-proxy. The suite passes -v (iio-sensor-proxy's debug output): motiond always
# logs, so it is left out; other arguments (--replace) go to motiond.
args=()
for arg in "\$@"; do
    case "\$arg" in
        -v | --verbose) ;;
        *) args+=("\$arg") ;;
    esac
done
exec "$motiond" --orientation-rules iio-sensor-proxy "\${args[@]}"
EOF
chmod +x "$work/B/src/iio-sensor-proxy"
ln -s /usr/bin/monitor-sensor "$work/B/src/monitor-sensor"

# The runner: loads the suite's module, leaves the log-text assertions unchecked, runs the cases.
cat > "$work/run.py" << 'EOF'
import importlib.util
import sys
import unittest

spec = importlib.util.spec_from_file_location("integration_test", "tests/integration-test.py")
suite_module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(suite_module)


class LogTextNotChecked:
    """Equal to anything: an assertion on iio-sensor-proxy's log text passes whichever value it expects."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __repr__(self):
        return "<log text not checked>"


skipped = []


def have_text_in_log(self, text):
    skipped.append((self.id().rsplit(".", 1)[-1], text))
    return LogTextNotChecked()


suite_module.Tests.have_text_in_log = have_text_in_log
tests = unittest.TestSuite(suite_module.Tests(name) for name in sys.argv[1:])
result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(tests)
for case, text in skipped:
    print("log text not checked: %s: %r" % (case, text))
failed = {test.id().rsplit(".", 1)[-1] for test, _ in result.failures + result.errors}
for name in sys.argv[1:]:
    print("%s %s" % ("FAIL" if name in failed else "pass", name))
passed = result.testsRun - len(failed)
print("check-sensor-proxy-suite: %d of %d cases of iio-sensor-proxy 3.9's integration suite passed against motiond"
      % (passed, len(sys.argv) - 1))
sys.exit(0 if passed == len(sys.argv) - 1 and result.testsRun == len(sys.argv) - 1 else 1)
EOF

cd "$work"
status=0
top_builddir="$work/B" top_srcdir="$work" umockdev-wrapper "$python" run.py "${cases[@]}" || status=$?
exit "$status"
