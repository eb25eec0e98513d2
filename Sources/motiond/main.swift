import ArgumentParser
import MotionService
import MotionCommandLine

#if canImport(Glibc)
import Glibc
#endif

// Top-level code runs on the main thread before any other thread exists: block the stop signals here, so that
// every thread inherits the mask and only the service's loop takes them.
MotionDaemon.blockStopSignals()
let arguments = CommandLineArguments.joiningNegativeValues(Array(CommandLine.arguments.dropFirst()))
if arguments == ["--version"] {
    print(Motiond.versionReport)
    exit(0)
}
let options: Motiond
do {
    options = try Motiond.parse(arguments)  // --help exits here
} catch {
    Motiond.exit(withError: error)
}
Task.detached {
    do {
        try await options.serve()
        exit(0)
    } catch {
        Motiond.exit(withError: error)
    }
}
// The service runs on other threads and ends the process; the main thread only waits. Not `dispatchMain()`
// (it unblocks the signals in this thread) and not the main actor (nothing here needs it).
while true { sleep(3600) }
