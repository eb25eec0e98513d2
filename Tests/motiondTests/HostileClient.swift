import Foundation
import IIOTestbed
import TestFiles

/// A client of motiond in another process (python3-dbus), run as uid 65534 with no groups (`setpriv`) or as root:
/// what a local user could do to the service. It prints one JSON object per line of what it saw.
///
/// Commands (`python3 hostile-client.py COMMAND …`):
/// - `open CONNECTIONS PER_CONNECTION KIND INTERVAL [hold|read SECONDS]`: opens streams, prints
///   `{"opened": n, "refused": {error: count}, "message": last refusal}`; then holds them unread until killed, or
///   reads every one for SECONDS and prints `{"union": distinct timestamps, "span": s, "rows": [per stream],
///   "spans": [per stream, s]}`.
/// - `claims CONNECTIONS`: on each connection claims the four sensors of net.hadess.SensorProxy and opens an
///   orientation stream; prints `{"claimed": n, "streams": n, "refused": {…}}`, then holds until killed.
/// - `history CONNECTIONS PER_CONNECTION`: on each connection, PER_CONNECTION `OpenHistory` queries of everything
///   (Unix times 0 to 10¹²), their descriptors held unread; prints `{"opened": n, "refused": {error: count},
///   "message": last refusal}`, then holds until killed.
/// - `flood CALLS`: sends CALLS OpenStream calls at once on one connection without waiting, then waits for every
///   answer (at most 60 s); prints `{"answered": n, "opened": n, "refused": {error: count}, "message": …}`.
/// - `fdflood CONNECTIONS CALLS`: CALLS OpenStream calls on each connection, each carrying 16 descriptors, sent at
///   once; prints `{"sent": n}`, then, once all are answered (at most 60 s), the counts as `flood` does.
/// - `options ENTRIES [CALLS]`: CALLS (default 1) OpenStream calls, one after another, each with an options
///   dictionary of ENTRIES entries; prints `{"opened": n, "refused": {error: count}, "error": the last refusal's
///   name, "message": its message}`.
struct HostileClient {
    static let script = #"""
        import dbus, json, os, sys, time, select
        address = os.environ["DBUS_SYSTEM_BUS_ADDRESS"]
        command = sys.argv[1]

        def out(value):
            print(json.dumps(value), flush=True)

        def motion(bus):
            return dbus.Interface(bus.get_object("org.swiftmotion.Motion1", "/org/swiftmotion/Motion1"),
                                  "org.swiftmotion.Motion1")

        def no_options():
            return dbus.Dictionary({}, signature="sv")

        def open_on_connections(connections, per, call):
            # call(bus, opened so far) PER times on each of CONNECTIONS connections; prints the count and the
            # refusals, returns the connections (kept open) and the descriptors.
            buses, fds, refused, message = [], [], {}, ""
            for _ in range(connections):
                bus = dbus.bus.BusConnection(address)
                buses.append(bus)
                for _ in range(per):
                    try:
                        fds.append(call(bus, len(fds)).take())
                    except dbus.DBusException as error:
                        name = error.get_dbus_name()
                        refused[name] = refused.get(name, 0) + 1
                        message = error.get_dbus_message()
            out({"opened": len(fds), "refused": refused, "message": message})
            return buses, fds

        if command == "open":
            connections, per, kind, interval = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
            mode = sys.argv[6] if len(sys.argv) > 6 else "hold"
            form = "jsonl" if kind in ("orientation", "shake") else "csv"
            # Intervals a microsecond apart: the same request twice is refused as already open.
            buses, fds = open_on_connections(connections, per, lambda bus, opened: motion(bus).OpenStream(
                kind, dbus.Double(interval + opened * 1e-6), form, no_options())[0])
            if mode == "read":
                seconds = float(sys.argv[7])
                pending = {fd: b"" for fd in fds}
                rows = {fd: [] for fd in fds}
                end = time.monotonic() + seconds
                while time.monotonic() < end:
                    ready, _, _ = select.select(fds, [], [], 0.1)
                    for fd in ready:
                        data = os.read(fd, 65536)
                        pending[fd] += data
                        *lines, pending[fd] = pending[fd].split(b"\n")
                        for line in lines:
                            if line and not line.startswith(b"#") and not line.startswith(b"t,"):
                                rows[fd].append(float(line.split(b",")[0]))
                times = sorted(set(t for fd in fds for t in rows[fd]))
                out({"union": len(times), "span": (times[-1] - times[0]) if len(times) > 1 else 0,
                     "rows": [len(rows[fd]) for fd in fds],
                     "spans": [(rows[fd][-1] - rows[fd][0]) if len(rows[fd]) > 1 else 0 for fd in fds]})
            else:
                while True:
                    time.sleep(3600)

        elif command == "history":
            connections, per = int(sys.argv[2]), int(sys.argv[3])
            buses, fds = open_on_connections(connections, per, lambda bus, opened: motion(bus).OpenHistory(
                dbus.Double(0), dbus.Double(1e12), "csv", no_options()))
            while True:
                time.sleep(3600)

        elif command == "claims":
            connections = int(sys.argv[2])
            buses, fds, claimed, refused = [], [], 0, {}
            for _ in range(connections):
                bus = dbus.bus.BusConnection(address)
                buses.append(bus)
                proxy = bus.get_object("net.hadess.SensorProxy", "/net/hadess/SensorProxy")
                compass = bus.get_object("net.hadess.SensorProxy", "/net/hadess/SensorProxy/Compass")
                calls = [(proxy, "net.hadess.SensorProxy", name) for name in
                         ("ClaimAccelerometer", "ClaimLight", "ClaimProximity")]
                calls.append((compass, "net.hadess.SensorProxy.Compass", "ClaimCompass"))
                for target, interface, name in calls:
                    try:
                        target.get_dbus_method(name, interface)()
                        claimed += 1
                    except dbus.DBusException as error:
                        refused[error.get_dbus_name()] = refused.get(error.get_dbus_name(), 0) + 1
                try:
                    fd, _ = motion(bus).OpenStream("orientation", dbus.Double(1), "jsonl", no_options())
                    fds.append(fd.take())
                except dbus.DBusException as error:
                    refused[error.get_dbus_name()] = refused.get(error.get_dbus_name(), 0) + 1
            out({"claimed": claimed, "streams": len(fds), "refused": refused})
            while True:
                time.sleep(3600)

        elif command == "flood":
            from dbus.mainloop.glib import DBusGMainLoop
            from gi.repository import GLib
            DBusGMainLoop(set_as_default=True)
            calls = int(sys.argv[2])
            bus = dbus.bus.BusConnection(address)
            interface = motion(bus)
            loop = GLib.MainLoop()
            result = {"answered": 0, "opened": 0, "refused": {}, "message": ""}
            def done():
                result["answered"] += 1
                if result["answered"] == calls:
                    loop.quit()
            def opened(fd, stream):
                result["opened"] += 1
                done()
            def failed(error):
                name = error.get_dbus_name()
                result["refused"][name] = result["refused"].get(name, 0) + 1
                result["message"] = error.get_dbus_message()
                done()
            for i in range(calls):
                interface.OpenStream("samples", dbus.Double(0.04 + i * 0.001), "csv", no_options(),
                                     reply_handler=opened, error_handler=failed, timeout=60)
            GLib.timeout_add_seconds(60, loop.quit)
            loop.run()
            out(result)

        elif command == "fdflood":
            # CALLS OpenStream calls on each of CONNECTIONS connections, each with 16 descriptors attached (the
            # system bus's most per message; OpenStream takes none), all sent without waiting.
            from gi.repository import Gio, GLib
            connections, calls = int(sys.argv[2]), int(sys.argv[3])
            loop = GLib.MainLoop()
            result = {"answered": 0, "opened": 0, "refused": {}}
            total = connections * calls
            def done(connection, task):
                try:
                    connection.call_with_unix_fd_list_finish(task)
                    result["opened"] += 1
                except GLib.Error as error:
                    name = Gio.DBusError.get_remote_error(error) or str(error)
                    result["refused"][name] = result["refused"].get(name, 0) + 1
                result["answered"] += 1
                if result["answered"] == total:
                    loop.quit()
            held = []
            for c in range(connections):
                connection = Gio.DBusConnection.new_for_address_sync(
                    address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
                    None, None)
                held.append(connection)
                for i in range(calls):
                    fds = Gio.UnixFDList.new()
                    for _ in range(16):
                        descriptor = os.open("/dev/null", os.O_RDONLY)
                        fds.append(descriptor)
                        os.close(descriptor)
                    parameters = GLib.Variant("(sdsa{sv})", ("samples", 0.04 + (c * calls + i) * 1e-6, "csv", {}))
                    connection.call_with_unix_fd_list(
                        "org.swiftmotion.Motion1", "/org/swiftmotion/Motion1", "org.swiftmotion.Motion1", "OpenStream",
                        parameters, None, Gio.DBusCallFlags.NONE, 60000, fds, None, done)
            out({"sent": total})
            GLib.timeout_add_seconds(60, loop.quit)
            loop.run()
            out(result)

        elif command == "options":
            entries = int(sys.argv[2])
            calls = int(sys.argv[3]) if len(sys.argv) > 3 else 1
            options = dbus.Dictionary({"k%d" % i: dbus.Int32(i) for i in range(entries)}, signature="sv")
            interface = motion(dbus.bus.BusConnection(address))
            result = {"opened": 0, "refused": {}}
            for _ in range(calls):
                try:
                    interface.OpenStream("samples", dbus.Double(1), "csv", options, timeout=120)
                    result["opened"] += 1
                except dbus.DBusException as error:
                    name = error.get_dbus_name()
                    result["refused"][name] = result["refused"].get(name, 0) + 1
                    result["error"], result["message"] = name, error.get_dbus_message()
            out(result)
        """#

    /// The script, written once per test process.
    static let path: String = {
        let path = ScratchFolder.root + "/hostile-client.py"
        try? script.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }()

    /// Starts the client on `bus` with `arguments`, as uid 65534 without groups unless `asRoot`.
    static func start(_ bus: PrivateSystemBus, _ arguments: [String], asRoot: Bool = false) throws -> ChildProcess {
        let python = ["/usr/bin/python3", path] + arguments
        if asRoot { return try bus.start(python[0], Array(python.dropFirst())) }
        return try bus.start("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups"] + python)
    }

    /// The JSON objects the client printed so far, one per line.
    static func reports(_ client: ChildProcess) -> [[String: Any]] {
        client.text.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("{") else { return nil }
            return (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }

    /// Waits (at most `limit` seconds) for the client's `count`-th report and returns it.
    static func report(_ client: ChildProcess, _ count: Int = 1, limit: Double = 60) async throws -> [String: Any] {
        _ = try await client.wait(timeout: limit) { _ in reports(client).count >= count }
        let all = reports(client)
        guard all.count >= count else {
            throw TestbedError("the hostile client printed no report \(count) within \(limit) s: \(client.text)")
        }
        return all[count - 1]
    }
}
