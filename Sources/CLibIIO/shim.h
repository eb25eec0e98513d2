#ifndef SWIFT_MOTION_CLIBIIO_SHIM_H
#define SWIFT_MOTION_CLIBIIO_SHIM_H
#include <iio.h>
#endif
