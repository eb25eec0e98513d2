#!/usr/bin/env python3
"""Copies a folder of accelerometer traces at a lower output rate, as a sensor set to that rate would give them.

Each output sample is the mean of the input samples of one window of 1/RATE seconds (a window starts at the first
sample at least 1/RATE s after the previous window's start), stamped with their mean time: the box filter stands
for the low-pass a sensor applies at a lower output data rate, so nothing above the new Nyquist frequency is folded
into the band. Comment lines (`#`) are kept and the header becomes t,ax,ay,az (other columns, such as a gyroscope's,
are dropped); other files (steps.csv, step-times/) are copied, so the copy scores like the original with
../shared/tools/score_steps.py.

Usage: Scripts/resample-walks.py SOURCE_DIR DEST_DIR RATE_HZ
Used for Docs/Pedometer.md, "Lower sample rates", and by Scripts/check-steps.sh.
"""
import os
import shutil
import sys


def resample(source, destination, rate):
    window = 1 / rate
    with open(source) as lines, open(destination, "w") as out:
        header = None
        samples = []
        start = None
        for number, line in enumerate(lines, 1):
            if line.startswith("#"):
                out.write(line)
                continue
            if header is None:
                header = line.strip().split(",")
                if header[:4] != ["t", "ax", "ay", "az"]:
                    sys.exit(f"{source}:{number}: the header is not t,ax,ay,az,…: {line.strip()}")
                # Only the accelerometer is resampled: other columns (gyroscope, magnetometer) are dropped.
                out.write("t,ax,ay,az\n")
                continue
            fields = line.strip().split(",")
            try:
                t, ax, ay, az = (float(x) for x in fields[:4])
            except ValueError:
                sys.exit(f"{source}:{number}: not four numbers: {line.strip()}")
            if start is None:
                start = t
            if t - start >= window - 1e-4 and samples:
                n = len(samples)
                mean = [sum(s[k] for s in samples) / n for k in range(4)]
                out.write("%.6f,%.8g,%.8g,%.8g\n" % tuple(mean))
                samples = []
                start = t
            samples.append((t, ax, ay, az))


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.strip().splitlines()[-2])
    source, destination, rate = sys.argv[1], sys.argv[2], float(sys.argv[3])
    if not rate > 0:
        sys.exit(f"RATE_HZ must be a positive number of hertz, got {sys.argv[3]}")
    os.makedirs(destination, exist_ok=True)
    for name in sorted(os.listdir(source)):
        path = os.path.join(source, name)
        target = os.path.join(destination, name)
        if os.path.isdir(path):
            shutil.copytree(path, target, dirs_exist_ok=True)
        elif name.endswith(".csv") and name != "steps.csv":
            resample(path, target, rate)
        else:
            shutil.copy(path, target)


if __name__ == "__main__":
    main()
