import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// SIGINT and SIGTERM handling: the first signal asks the running command to finish its current line and exit
/// cleanly; a second one exits at once with status 128 + signal number. SIGPIPE is ignored, so a closed output
/// pipe surfaces as an EPIPE write error, which ends the command quietly.
enum Interruption {
    private static let requested = Atomic<Int32>(0)

    /// Installs the handlers. Call once, before the first sample.
    static func install() {
        signal(SIGPIPE, SIG_IGN)
        // A parent may have blocked these (some test runners and service managers do); we must receive them.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        for sig in [SIGINT, SIGTERM] {
            signal(sig) { number in
                if Interruption.requested.exchange(number, ordering: .relaxed) != 0 {
                    _exit(128 + number)
                }
            }
        }
    }

    /// `true` once SIGINT or SIGTERM has arrived.
    static var isRequested: Bool { requested.load(ordering: .relaxed) != 0 }
}
