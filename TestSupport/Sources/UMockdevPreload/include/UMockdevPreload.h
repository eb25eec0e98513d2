#ifndef SWIFT_MOTION_UMOCKDEV_PRELOAD_H
#define SWIFT_MOTION_UMOCKDEV_PRELOAD_H

#include <pty.h>      // openpty, for the emulated /dev nodes the Swift testbed makes
#include <termios.h>

/// Returns 1 when libumockdev-preload.so.0 is mapped into this process (it was in LD_PRELOAD when the
/// process started), 0 otherwise. Only then do umockdev testbeds redirect /sys and /dev.
int swift_motion_umockdev_preload_active(void);

/// Returns 1 when this process was re-executed by the constructor to add the preload, 0 otherwise.
int swift_motion_umockdev_reexecuted(void);

/// Removes the folder `root` (recursively, without following links) when the process exits; once.
void swift_motion_remove_at_exit(const char *root);

#endif
