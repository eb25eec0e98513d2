#ifndef SWIFT_MOTION_CMOSQUITTO_SHIM_H
#define SWIFT_MOTION_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#endif
