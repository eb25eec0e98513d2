#ifndef SWIFT_MOTION_CSYSTEMD_SHIM_H
#define SWIFT_MOTION_CSYSTEMD_SHIM_H
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

/* sd-bus's vtable macros (SD_BUS_VTABLE_START, SD_BUS_METHOD, …) do not import into Swift, and the start entry
   needs the address of sd_bus_object_vtable_format: these build the same entries from run-time strings. */

static inline sd_bus_vtable swift_motion_vtable_start(uint64_t flags) {
    sd_bus_vtable entry = SD_BUS_VTABLE_START(flags);
    return entry;
}

static inline sd_bus_vtable swift_motion_vtable_method(
    const char *member, const char *signature, const char *result, const char *names,
    sd_bus_message_handler_t handler, uint64_t flags) {
    sd_bus_vtable entry = SD_BUS_METHOD_WITH_NAMES_OFFSET(NULL, NULL, "", NULL, "", NULL, 0, flags);
    entry.x.method.member = member;
    entry.x.method.signature = signature;
    entry.x.method.result = result;
    entry.x.method.names = names;
    entry.x.method.handler = handler;
    return entry;
}

static inline sd_bus_vtable swift_motion_vtable_property(
    const char *member, const char *signature, sd_bus_property_get_t getter, uint64_t flags) {
    sd_bus_vtable entry = SD_BUS_PROPERTY(NULL, NULL, NULL, 0, flags);
    entry.x.property.member = member;
    entry.x.property.signature = signature;
    entry.x.property.get = getter;
    return entry;
}

static inline sd_bus_vtable swift_motion_vtable_signal(
    const char *member, const char *signature, const char *names, uint64_t flags) {
    sd_bus_vtable entry = SD_BUS_SIGNAL_WITH_NAMES(NULL, NULL, "", flags);
    entry.x.signal.member = member;
    entry.x.signal.signature = signature;
    entry.x.signal.names = names;
    return entry;
}

static inline sd_bus_vtable swift_motion_vtable_end(void) {
    sd_bus_vtable entry = SD_BUS_VTABLE_END;
    return entry;
}

/* Flag values (anonymous enums and macros) as plain functions. */
static inline uint64_t swift_motion_vtable_emits_change(void) { return SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE; }
static inline uint64_t swift_motion_vtable_unprivileged(void) { return SD_BUS_VTABLE_UNPRIVILEGED; }
static inline int swift_motion_name_replace_existing(void) { return SD_BUS_NAME_REPLACE_EXISTING; }
static inline int swift_motion_name_allow_replacement(void) { return SD_BUS_NAME_ALLOW_REPLACEMENT; }
static inline int swift_motion_name_queue(void) { return SD_BUS_NAME_QUEUE; }
static inline uint64_t swift_motion_creds_augment(void) { return SD_BUS_CREDS_AUGMENT; }
static inline uint64_t swift_motion_creds_pid(void) { return SD_BUS_CREDS_PID; }
static inline uint64_t swift_motion_creds_comm(void) { return SD_BUS_CREDS_COMM; }
static inline uint64_t swift_motion_creds_exe(void) { return SD_BUS_CREDS_EXE; }
static inline const sd_bus_error swift_motion_error_null(void) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    return error;
}
#endif
