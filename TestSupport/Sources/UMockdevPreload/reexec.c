// Test support: makes the test binary run under umockdev's preload library.
//
// umockdev redirects /sys and /dev only for processes that start with libumockdev-preload.so.0 in
// LD_PRELOAD; loading it later (dlopen) has no effect. This constructor runs before main: when the preload
// is not mapped yet, it prepends it to LD_PRELOAD and re-executes /proc/self/exe with the same arguments, once.
// A plain `swift test` therefore runs the emulated-device tests. Opt out with UMOCKDEV_NO_REEXEC=1 (for
// example under `umockdev-wrapper swift test`, which sets the preload itself).
#define _GNU_SOURCE
#define _XOPEN_SOURCE 700
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "UMockdevPreload.h"

#define PRELOAD_NAME "libumockdev-preload.so.0"

int swift_motion_umockdev_preload_active(void) {
    // RTLD_NOLOAD: succeeds only when the library is already mapped; never loads it.
    void *handle = dlopen(PRELOAD_NAME, RTLD_LAZY | RTLD_NOLOAD);
    if (handle == NULL) return 0;
    dlclose(handle);
    return 1;
}

int swift_motion_umockdev_reexecuted(void) {
    return getenv("SWIFT_MOTION_UMOCKDEV_REEXEC") != NULL;
}

static int preload_installed(void) {
    static const char *const dirs[] = {
        "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib/arm-linux-gnueabihf",
        "/usr/lib/riscv64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib", NULL,
    };
    char path[512];
    for (int i = 0; dirs[i] != NULL; i++) {
        snprintf(path, sizeof path, "%s/%s", dirs[i], PRELOAD_NAME);
        if (access(path, R_OK) == 0) return 1;
    }
    return 0;
}

__attribute__((constructor))
static void swift_motion_umockdev_reexec(int argc, char **argv, char **envp) {
    (void)argc;
    (void)envp;
    if (swift_motion_umockdev_preload_active()) return;
    if (getenv("UMOCKDEV_NO_REEXEC") != NULL) return;
    if (swift_motion_umockdev_reexecuted()) return;  // tried once; never loop
    if (!preload_installed()) return;                 // the tests report it (and fail under CI=true)

    const char *old_value = getenv("LD_PRELOAD");
    char *old = old_value != NULL ? strdup(old_value) : NULL;
    size_t length = strlen(PRELOAD_NAME) + (old != NULL ? strlen(old) + 1 : 0) + 1;
    char *value = malloc(length);
    if (value == NULL) {
        free(old);
        return;
    }
    if (old != NULL && old[0] != '\0')
        snprintf(value, length, "%s:%s", PRELOAD_NAME, old);
    else
        snprintf(value, length, "%s", PRELOAD_NAME);
    setenv("LD_PRELOAD", value, 1);
    setenv("SWIFT_MOTION_UMOCKDEV_REEXEC", "1", 1);
    free(value);
    execv("/proc/self/exe", argv);
    // execv failed: carry on without the preload (the tests report it), with the environment restored.
    if (old != NULL) setenv("LD_PRELOAD", old, 1); else unsetenv("LD_PRELOAD");
    unsetenv("SWIFT_MOTION_UMOCKDEV_REEXEC");
    free(old);
}

// Removing the shared testbed's folder when the process exits (the testbed is never freed; see Testbed.swift).
#include <ftw.h>

static char *testbed_root_at_exit;

static int remove_entry(const char *path, const struct stat *info, int flag, struct FTW *ftw) {
    (void)info;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_testbed_root(void) {
    if (testbed_root_at_exit != NULL) nftw(testbed_root_at_exit, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void swift_motion_remove_at_exit(const char *root) {
    if (testbed_root_at_exit != NULL || root == NULL) return;
    testbed_root_at_exit = strdup(root);
    atexit(remove_testbed_root);
}
