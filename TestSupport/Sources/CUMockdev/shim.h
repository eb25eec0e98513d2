#ifndef SWIFT_MOTION_CUMOCKDEV_SHIM_H
#define SWIFT_MOTION_CUMOCKDEV_SHIM_H
// Test-only: libumockdev's testbed API (emulated sysfs, udev properties, uevents and /dev nodes).
#include <umockdev.h>
#endif
