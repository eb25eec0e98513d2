#ifndef SWIFT_MOTION_UMOCKDEV_PRELOAD_H
#define SWIFT_MOTION_UMOCKDEV_PRELOAD_H

/// Returns 1 when libumockdev-preload.so.0 is mapped into this process (it was in LD_PRELOAD when the
/// process started), 0 otherwise. Only then do umockdev testbeds redirect /sys and /dev.
int swift_motion_umockdev_preload_active(void);

/// Returns 1 when this process was re-executed by the constructor to add the preload, 0 otherwise.
int swift_motion_umockdev_reexecuted(void);

#endif
