import Foundation
import MotionCore
import MotionDBus

#if canImport(Glibc)
import Glibc
#endif

/// A D-Bus client of the private bus in this test process (sd-bus through MotionDBus), for the calls whose
/// replies carry file descriptors, which busctl cannot hand over.
final class BusClient: Sendable {
    let loop: DBusEventLoop
    private let connection: LoopBound<DBusConnection>

    init(address: String) async throws {
        let loop = try DBusEventLoop()
        self.loop = loop
        connection = try await loop.submit { () throws(MotionError) -> LoopBound<DBusConnection> in
            LoopBound(try DBusConnection.client(address: address, on: loop), loop: loop)
        }
    }

    /// Calls `member` of org.swiftmotion.Motion1 (or `interface` at `path`).
    func call(
        _ member: String, _ arguments: [DBusValue] = [], interface: String = "org.swiftmotion.Motion1",
        path: String = "/org/swiftmotion/Motion1", destination: String = "org.swiftmotion.Motion1"
    ) async throws(MotionError) -> [DBusValue] {
        try await loop.submit { [connection] () throws(MotionError) -> [DBusValue] in
            try connection.value.call(
                destination: destination, path: path, interface: interface, member: member, arguments: arguments,
                timeout: 20)
        }
    }

    /// Opens a stream; returns its socket (ours to close) and id.
    func openStream(
        _ kind: String, interval: Double, format: String, options: [(String, DBusValue)] = []
    ) async throws(MotionError) -> StreamReader {
        let reply = try await call(
            "OpenStream", [.string(kind), .double(interval), .string(format), .properties(options)])
        guard reply.count == 2, case .fileDescriptor(let descriptor) = reply[0], case .uint32(let id) = reply[1] else {
            throw MotionError(.ioFailure, "OpenStream replied \(reply)")
        }
        return StreamReader(descriptor: descriptor, id: id)
    }

    func close() async {
        _ = try? await loop.submit { [connection] () throws(MotionError) -> Void in connection.value.close() }
        loop.stop()
        await loop.wait()
    }
}

/// The client's end of a stream: its lines as they come.
final class StreamReader: @unchecked Sendable {
    let descriptor: Int32
    let id: UInt32
    private var pending: [UInt8] = []
    private(set) var lines: [String] = []
    private(set) var ended = false

    init(descriptor: Int32, id: UInt32) {
        self.descriptor = descriptor
        self.id = id
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    }

    /// Reads what has arrived (without waiting).
    func poll() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = Glibc.read(descriptor, &buffer, buffer.count)
            if count == 0 { ended = true }
            guard count > 0 else { break }
            pending += buffer[..<count]
        }
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(String(decoding: pending[..<newline], as: UTF8.self))
            pending.removeSubrange(...newline)
        }
    }

    /// Reads until `condition` holds for the lines so far or `limit` seconds pass; whether it held.
    func read(limit: Double = 20, until condition: ([String]) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(limit)
        while Date() < deadline {
            poll()
            if condition(lines) || ended { return condition(lines) }
            try? await Task.sleep(for: .milliseconds(20))
        }
        poll()
        return condition(lines)
    }

    /// The `t` of the data rows of a CSV stream (not comments, not the header).
    var csvTimestamps: [Double] {
        lines.filter { !$0.hasPrefix("#") && !$0.hasPrefix("t,") }.compactMap { line in
            line.split(separator: ",", omittingEmptySubsequences: false).first.flatMap { Double($0) }
        }
    }

    func close() { Glibc.close(descriptor) }
}
