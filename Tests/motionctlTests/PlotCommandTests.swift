import Foundation
import IIOTestbed
import TestThreads
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension Prerequisite {
    /// rsvg-convert (librsvg2-bin), to render an SVG with a real renderer, and python3 to decode the PNG it makes.
    static let svgRenderer = Prerequisite(
        "rsvg-convert and python3",
        help: "install librsvg2-bin and python3 (Scripts/install-system-packages.sh test, which .ci/run runs)"
    ) { access("/usr/bin/rsvg-convert", X_OK) == 0 && access("/usr/bin/python3", X_OK) == 0 }
}

/// `motionctl plot` end to end: the SVG rendered by librsvg, the PNG decoded and its pixels counted. Rendering,
/// decoding and making long traces take seconds of waiting or computing: off Swift's cooperative pool
/// (`.computeBound`), which the tests that wait for real time need.
@Suite(.computeBound) struct PlotCommandTests {
    /// What a rendered PNG holds: its size and how many pixels have each colour of interest.
    struct Pixels: Decodable {
        var width: Int
        var height: Int
        /// Pixels that are not white (any channel below 250).
        var nonWhite: Int
        /// Pixels within 40 of each series colour (x/roll red, y/pitch green, z/yaw blue) on every channel.
        var red: Int
        var green: Int
        var blue: Int
        /// Distinct colours.
        var colours: Int

        /// Not blank: some drawing, and each of the three series colours on a visible number of pixels.
        var showsThreeSeries: Bool { nonWhite > 1000 && colours > 10 && min(red, green, blue) >= 200 }
    }

    /// Decodes an 8-bit RGB or RGBA, non-interlaced PNG (what rsvg-convert writes) with Python's standard library
    /// only, and counts pixels.
    static let pngCounter = #"""
        import json, struct, sys, zlib
        data = open(sys.argv[1], "rb").read()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
        pos, idat = 8, b""
        while pos < len(data):
            length, kind = struct.unpack(">I4s", data[pos:pos + 8])
            body = data[pos + 8:pos + 8 + length]
            if kind == b"IHDR":
                width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
                assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
            elif kind == b"IDAT":
                idat += body
            pos += 12 + length
        channels = 4 if colour == 6 else 3
        raw = zlib.decompress(idat)
        stride = width * channels
        rows, previous = [], bytearray(stride)
        for y in range(height):
            kind = raw[y * (stride + 1)]
            line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b = previous[i]
                c = previous[i - channels] if i >= channels else 0
                if kind == 1: line[i] = (line[i] + a) & 255
                elif kind == 2: line[i] = (line[i] + b) & 255
                elif kind == 3: line[i] = (line[i] + (a + b) // 2) & 255
                elif kind == 4:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            rows.append(line)
            previous = line
        def near(pixel, target): return all(abs(pixel[k] - target[k]) <= 40 for k in range(3))
        targets = {"red": (0xd6, 0x27, 0x28), "green": (0x2c, 0xa0, 0x2c), "blue": (0x1f, 0x77, 0xb4)}
        counts = {name: 0 for name in targets}
        non_white, colours = 0, set()
        for line in rows:
            for x in range(width):
                pixel = tuple(line[x * channels:x * channels + 3])
                if channels == 4 and line[x * channels + 3] == 0: pixel = (255, 255, 255)  # transparent: paper
                colours.add(pixel)
                if min(pixel) < 250: non_white += 1
                for name, target in targets.items():
                    if near(pixel, target): counts[name] += 1
        print(json.dumps({"width": width, "height": height, "nonWhite": non_white, "colours": len(colours), **counts}))
        """#

    /// Renders `svg` (a file) to PNG with rsvg-convert and counts its pixels; the renderer's error is returned when
    /// it rejects the SVG.
    static func render(_ svg: String) async throws -> Pixels {
        let png = svg + ".png"
        let convert = try await Process.output(
            of: "/usr/bin/rsvg-convert", [svg, "-o", png], mergingStandardError: true)
        guard convert.status == 0 else { throw RenderError(message: "rsvg-convert: \(convert.output)") }
        let script = try Motionctl.temporaryFile(pngCounter, name: "count-pixels.py")
        let counted = try await Process.output(of: "/usr/bin/python3", [script, png], mergingStandardError: true)
        guard counted.status == 0 else { throw RenderError(message: "the PNG counter: \(counted.output)") }
        return try JSONDecoder().decode(Pixels.self, from: Data(counted.output.utf8))
    }

    struct RenderError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// The check itself can fail: a white page and a page with text only are blank to it.
    @Test(.requires(.svgRenderer)) func theBlankCheckRejectsABlankImage() async throws {
        let white = try Motionctl.temporaryFile(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"300\" height=\"200\"><rect width=\"300\" height=\"200\" fill=\"#ffffff\"/></svg>",
            name: "white.svg")
        let blank = try await Self.render(white)
        #expect(blank.width == 300 && blank.height == 200)
        #expect(blank.nonWhite == 0)
        #expect(!blank.showsThreeSeries)
        let textOnly = try Motionctl.temporaryFile(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"300\" height=\"200\"><text x=\"10\" y=\"50\">no data here at all</text></svg>",
            name: "text.svg")
        let text = try await Self.render(textOnly)
        #expect(text.nonWhite > 0)
        #expect(!text.showsThreeSeries)
    }

    @Test(.requires(.svgRenderer), arguments: [
        ("broad-slow-rotation-excerpt.csv", ["acceleration (g)", "rotation rate (rad/s)", "magnetic field (µT)"]),
        ("simulated-orientation-sweep.csv", ["acceleration (g)", "rotation rate (rad/s)", "magnetic field (µT)"]),
        ("simulated-shakes-with-distractors.csv", ["acceleration (g)", "rotation rate (rad/s)"]),
    ])
    func plotsTheShippedRecordings(name: String, axes: [String]) async throws {
        let path = try Motionctl.temporaryPath(name: "plot.svg")
        let result = try await Motionctl.run(["plot", "Recordings/\(name)", "--output", path, "--attitude", "--events"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        let svg = try String(contentsOfFile: path, encoding: .utf8)
        // One panel per sensor and one for attitude, each with its unit on the y axis and three lines.
        for label in axes + ["attitude (arbitrary) (degrees)"] {
            #expect(svg.contains(">\(label)</text>"), "\(label)")
        }
        #expect(svg.components(separatedBy: "<path d=\"M").count - 1 == 3 * (axes.count + 1))
        #expect(svg.contains(">time (s)</text>"))
        // No temporary file is left beside it.
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["plot.svg"])
        let pixels = try await Self.render(path)
        #expect(pixels.width == 1220)
        #expect(pixels.showsThreeSeries, "\(pixels)")
    }

    /// The events drawn are those the shake and orientation commands print for the same trace.
    @Test func eventMarkersAreTheCommandsEvents() async throws {
        let trace = "Recordings/simulated-shakes-with-distractors.csv"
        let plot = try await Motionctl.run(["plot", trace, "--output", "-", "--events"])
        #expect(plot.status == 0, "\(plot.stderr)")
        let shakes = try await Motionctl.run(["shake", "--trace", trace, "--speed", "max"])
        let orientations = try await Motionctl.run(["orientation", "--trace", trace, "--speed", "max"])
        let began = shakes.lines.filter { $0.contains("Shake began") }.count
        #expect(began > 0)
        #expect(plot.stdout.components(separatedBy: ">shake</text>").count - 1 == began)
        let ended = shakes.lines.filter { $0.contains("Shake ended") || $0.contains("Shake cancelled") }.count
        #expect(plot.stdout.components(separatedBy: ">shake end</text>").count - 1
            + plot.stdout.components(separatedBy: ">shake cancelled (").count - 1 == ended)
        let changes = orientations.lines.filter { $0.contains("Device orientation changed") }
        #expect(!changes.isEmpty)
        for change in changes {
            let orientation = try #require(change.split(separator: " ").last)
            #expect(plot.stdout.contains(">\(orientation)</text>"), "\(change)")
        }
        // Without --events, no marker.
        let plain = try await Motionctl.run(["plot", trace, "--output", "-"])
        #expect(!plain.stdout.contains("stroke-dasharray"))
    }

    /// An existing file is kept (73) unless --overwrite replaces it, and a refused plot leaves nothing behind.
    @Test func refusesToOverwriteWithoutTheFlag() async throws {
        let path = try Motionctl.temporaryPath(name: "existing.svg")
        try "keep me".write(toFile: path, atomically: true, encoding: .utf8)
        let refused = try await Motionctl.run(["plot", "Recordings/simulated-orientation-sweep.csv", "--output", path])
        #expect(refused.status == 73)
        #expect(refused.stderr.contains("\(path): the file already exists; choose another file, or pass --overwrite"))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "keep me")
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["existing.svg"])
        let replaced = try await Motionctl.run([
            "plot", "Recordings/simulated-orientation-sweep.csv", "--output", path, "--overwrite",
        ])
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(try String(contentsOfFile: path, encoding: .utf8).hasPrefix("<?xml"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["existing.svg"])
    }

    /// Metadata is text from the file: markup in it is shown as text, never taken as SVG, and characters XML does
    /// not allow are replaced; the renderer accepts the result.
    @Test(.requires(.svgRenderer)) func hostileMetadataIsEscaped() async throws {
        let hostile = "</svg><script>alert(\"x\")</script> & 'q' \u{1}"
        let trace = try Motionctl.temporaryFile(
            "# \(hostile)\n# note: <&\"]]>\nt,ax,ay,az\n0,0,0,-1\n0.01,1,0,-1\n0.02,0,1,-1\n0.03,0,0,1\n",
            name: "<svg>&\"x.csv")
        let path = try Motionctl.temporaryPath(name: "hostile.svg")
        let result = try await Motionctl.run(["plot", trace, "--output", path])
        #expect(result.status == 0, "\(result.stderr)")
        let svg = try String(contentsOfFile: path, encoding: .utf8)
        #expect(!svg.contains("<script"))
        #expect(svg.components(separatedBy: "</svg>").count == 2)  // the document's own end only
        #expect(svg.contains("&lt;/svg&gt;&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39; \u{FFFD}"))
        #expect(svg.contains("note: &lt;&amp;&quot;]]&gt;"))
        #expect(svg.contains("&lt;svg&gt;&amp;&quot;x.csv</title>"))
        let pixels = try await Self.render(path)
        #expect(pixels.showsThreeSeries, "\(pixels)")
    }

    /// A gap in the readings breaks the lines: each of the three paths starts again after it.
    @Test func aGapBreaksTheLines() async throws {
        let trace = try Motionctl.temporaryFile(InfoCommandTests.gapTrace)
        let result = try await Motionctl.run(["plot", trace, "--output", "-"])
        #expect(result.status == 0, "\(result.stderr)")
        let paths = result.stdout.split(separator: "\n").filter { $0.hasPrefix("<path d=\"") }
        #expect(paths.count == 6)  // accelerometer and gyroscope, x, y and z
        for path in paths {
            #expect(path.filter { $0 == "M" }.count == 2, "\(path.prefix(200))")
        }
    }

    /// A long, noisy trace (200 000 rows, all three sensors, every value random) stays under the documented bound,
    /// about as large as one a tenth as long: the size depends on the plot's width, not on the trace.
    @Test func theSizeIsBounded() async throws {
        func noisyTrace(rows: Int) throws -> String {
            var state: UInt64 = 0x9E37_79B9_7F4A_7C15
            func random() -> Double {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return Double(state >> 11) / Double(1 << 53) * 4 - 2
            }
            var text = "# source: noise\nt,ax,ay,az,gx,gy,gz,mx,my,mz\n"
            text.reserveCapacity(rows * 110)
            for row in 0..<rows {
                text += "\(Double(row) / 100)"
                for _ in 0..<9 { text += ",\(random())" }
                text += "\n"
            }
            return try Motionctl.temporaryFile(text)
        }
        let bound = 1_000_000
        var sizes: [Int] = []
        for rows in [20_000, 200_000] {
            let result = try await Motionctl.run(["plot", try noisyTrace(rows: rows), "--output", "-", "--attitude", "--events"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.utf8.count <= bound)
            sizes.append(result.stdout.utf8.count)
        }
        #expect(sizes[1] < sizes[0] * 3 / 2, "\(sizes)")
    }

    /// Extreme but valid numbers (times and values near the largest doubles, a flat series) give a plot without a
    /// non-number coordinate, and `info` reports them.
    @Test func extremeNumbersDoNotBreakThePlot() async throws {
        let trace = try Motionctl.temporaryFile(
            "t,ax,ay,az,gx,gy,gz\n-1e308,1.7e308,-1.7e308,0,5,5,5\n0,-1.7e308,1.7e308,1e-300,5,5,5\n"
                + "1e308,1.7e308,1.7e308,0,5,5,5\n1e308,0,0,0,5,5,5\n")
        let result = try await Motionctl.run(["plot", trace, "--output", "-", "--events"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.firstMatch(of: #/\b(nan|inf)\b/#.ignoresCase()) == nil)
        #expect(result.stdout.components(separatedBy: "<path d=\"M").count - 1 == 6)
        let info = try await Motionctl.run(["info", trace, "--format", "json"])
        #expect(info.status == 0, "\(info.stderr)")
        let object = try #require(JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any])
        #expect(object["rows"] as? Int == 4)
        #expect(object["duration_s"] is NSNull)  // 2e308 s is beyond a double
    }

    @Test func attitudeNeedsAGyroscope() async throws {
        let trace = try Motionctl.temporaryFile("t,ax,ay,az\n0,0,0,-1\n")
        let result = try await Motionctl.run(["plot", trace, "--output", "-", "--attitude"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--attitude in the arbitrary frame"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test func aMalformedRowExitsWith65AndWritesNothing() async throws {
        let trace = try Motionctl.temporaryFile("t,ax,ay,az\n0,0,0,-1\n0.01,0,x,-1\n")
        let path = try Motionctl.temporaryPath(name: "bad.svg")
        let result = try await Motionctl.run(["plot", trace, "--output", path])
        #expect(result.status == 65)
        #expect(result.stderr.contains("\(trace):3: column 'ay'"))
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}
