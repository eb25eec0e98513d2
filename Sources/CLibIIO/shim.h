#ifndef SWIFT_MOTION_CLIBIIO_SHIM_H
#define SWIFT_MOTION_CLIBIIO_SHIM_H
#include <iio.h>
// Linux headers the Glibc module does not export, used by MotionIIO's reactor (epoll, eventfd).
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif
