#ifndef SWIFT_MOTION_CMOTIONSYSTEM_SHIM_H
#define SWIFT_MOTION_CMOTIONSYSTEM_SHIM_H
// Linux headers the Glibc module does not export, used by MotionSystem's reactor (epoll, eventfd).
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif
