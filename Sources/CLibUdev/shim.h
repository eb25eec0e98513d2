#ifndef SWIFT_MOTION_CLIBUDEV_SHIM_H
#define SWIFT_MOTION_CLIBUDEV_SHIM_H
#include <libudev.h>
#endif
