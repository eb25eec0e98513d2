import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The files of a test process, in one folder of its own, `$TMPDIR/swift-motion-tests.PID` (`/tmp` without
/// `TMPDIR`), that is removed with everything in it when the process exits. The folders that test processes
/// killed before their exit left behind are removed by the next one (their process is gone).
///
/// A test takes a new name in it for each file or folder (``path(_:suffix:)``, ``folder(_:)``), numbered in the
/// process: tests that run at once never share one, and paths stay short (a socket's path has at most 107
/// bytes). Nothing a test writes outlives the run: not the files a failed test leaves, nor the folders a program
/// under test creates. The folder is readable by everyone (mode 0755), as `/tmp` is, for the tests that run a
/// program as another user.
public enum ScratchFolder {
    /// The process's folder: created, and stale ones removed, on first use.
    public static var root: String { state.root }

    /// A new path `root/prefix-N` followed by `suffix` (such as `.csv`), N a number new in the process; nothing
    /// is created there.
    public static func path(_ prefix: String, suffix: String = "") -> String {
        let number = names.add(1, ordering: .relaxed).newValue
        return "\(root)/\(prefix)-\(number)\(suffix)"
    }

    /// A new empty folder `root/prefix-N`.
    public static func folder(_ prefix: String) throws -> String {
        let path = path(prefix)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        return path
    }

    private struct State: Sendable {
        let root: String
    }

    private static let namePrefix = "swift-motion-tests."
    private static let names = Atomic<Int>(0)

    private static let state: State = {
        let parent = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        removeStaleFolders(in: parent)
        let root = "\(parent)/\(namePrefix)\(getpid())"
        // A folder of this name left by an earlier process with the same number is stale too.
        try? FileManager.default.removeItem(atPath: root)
        // chmod too: mkdir's mode is masked by the umask.
        if mkdir(root, 0o755) != 0 || chmod(root, 0o755) != 0 {
            fatalError("The tests' scratch folder \(root) cannot be created: \(String(cString: strerror(errno))).")
        }
        atexit { try? FileManager.default.removeItem(atPath: ScratchFolder.root) }
        return State(root: root)
    }()

    /// Removes the folders of test processes that no longer run.
    private static func removeStaleFolders(in parent: String) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? []
        for name in names where name.hasPrefix(namePrefix) {
            guard let pid = pid_t(name.dropFirst(namePrefix.count)), pid > 0, pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(atPath: "\(parent)/\(name)")
            }
        }
    }
}
