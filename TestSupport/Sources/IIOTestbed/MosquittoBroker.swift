import Foundation
import TestFiles
import TestThreads

#if canImport(Glibc)
import Glibc
#endif

/// A real mosquitto broker on 127.0.0.1 on a free port, with persistence in a folder of its own (so that a
/// persistent subscriber's queued messages survive its restart), for one test.
public final class MosquittoBroker: @unchecked Sendable {
    /// The port it listens on (127.0.0.1).
    public let port: Int
    /// Its configuration and persistence.
    public let folder: String
    private var process: ChildProcess?

    /// A broker on a free port, not started.
    public init() throws {
        port = Self.freePort()
        folder = try ScratchFolder.folder("mosquitto")
        let configuration = """
            listener \(port) 127.0.0.1
            allow_anonymous true
            persistence true
            persistence_location \(folder)/
            autosave_interval 1
            """ + (getuid() == 0 ? "\nuser root" : "")  // as root, mosquitto would become user mosquitto: no access to this folder
        try configuration.write(toFile: folder + "/mosquitto.conf", atomically: true, encoding: .utf8)
    }

    /// Makes the broker accept only `user` with `password` (`mosquitto_passwd`); call before ``start()``.
    public func requirePassword(user: String, password: String) async throws {
        let file = folder + "/passwords"
        let (status, output) = try await Process.output(
            of: "/usr/bin/mosquitto_passwd", ["-c", "-b", file, user, password], mergingStandardError: true)
        guard status == 0 else { throw TestbedError("mosquitto_passwd failed: \(output)") }
        let configuration = try String(contentsOfFile: folder + "/mosquitto.conf", encoding: .utf8)
            .replacingOccurrences(of: "allow_anonymous true", with: "allow_anonymous false\npassword_file \(file)")
        try configuration.write(toFile: folder + "/mosquitto.conf", atomically: true, encoding: .utf8)
    }

    /// Makes the broker speak TLS only, with a certificate for 127.0.0.1 from a CA made here (`openssl`); returns the
    /// CA's certificate file, which clients verify the broker with. Call before ``start()``.
    public func requireTLS() async throws -> String {
        let ca = folder + "/ca"
        let server = folder + "/server"
        let steps: [[String]] = [
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca + ".key", "-out", ca + ".crt", "-days", "2",
             "-subj", "/CN=swift-motion test CA"],
            ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", server + ".key", "-out", server + ".csr",
             "-subj", "/CN=127.0.0.1"],
            ["x509", "-req", "-in", server + ".csr", "-CA", ca + ".crt", "-CAkey", ca + ".key", "-CAcreateserial",
             "-out", server + ".crt", "-days", "2", "-extfile", server + ".ext"],
        ]
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: server + ".ext", atomically: true, encoding: .utf8)
        for step in steps {
            let (status, output) = try await Process.output(of: "/usr/bin/openssl", step, mergingStandardError: true)
            guard status == 0 else { throw TestbedError("openssl \(step[0]) failed: \(output)") }
        }
        let configuration = try String(contentsOfFile: folder + "/mosquitto.conf", encoding: .utf8)
            + "\ncafile \(ca).crt\ncertfile \(server).crt\nkeyfile \(server).key\n"
        try configuration.write(toFile: folder + "/mosquitto.conf", atomically: true, encoding: .utf8)
        return ca + ".crt"
    }

    /// Starts the broker and waits (at most 10 s) until it listens.
    public func start() async throws {
        // Through a launcher that unblocks every signal first: a child of the test runner starts with SIGTERM
        // blocked (the mask is inherited), and mosquitto would then not stop on it, nor save its persistence.
        let child = try ChildProcess(
            "/usr/bin/python3",
            ["-c", "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, set()); os.execv(sys.argv[1], sys.argv[1:])",
             "/usr/sbin/mosquitto", "-c", folder + "/mosquitto.conf"],
            environment: [:])
        process = child
        guard try await child.wait(timeout: 10, until: { _ in Self.listens(self.port) }) else {
            throw TestbedError("mosquitto did not listen on \(port) within 10 s: \(child.text)")
        }
    }

    /// Stops the broker (SIGTERM: it saves its persistence) and waits for it (at most 10 s, then SIGKILL).
    public func stop() async throws {
        guard let process else { return }
        process.send(SIGTERM)
        let status = try await process.waitForExit(timeout: 10)
        process.stop()
        self.process = nil
        guard status != nil else { throw TestbedError("mosquitto did not stop within 10 s of SIGTERM: \(process.text)") }
    }

    deinit {
        process?.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// A persistent QoS-1 subscriber to `filter` (`mosquitto_sub -c`), printing `topic payload` lines.
    public func subscribe(_ filter: String, id: String) throws -> ChildProcess {
        try ChildProcess(
            "/usr/bin/mosquitto_sub",
            ["-h", "127.0.0.1", "-p", "\(port)", "-t", filter, "-q", "1", "-c", "-i", id, "-v"], environment: [:])
    }

    /// Whether something accepts connections on 127.0.0.1:`port`.
    public static func listens(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// A port nothing listens on now (bound to 0 and released).
    public static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
