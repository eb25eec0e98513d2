import IIOTestbed
import MotionIIO
import Testing

@Suite struct ScanElementTypeTests {
    struct ParseCase: CustomTestStringConvertible, Sendable {
        let text: String
        let expected: ScanElementType?
        var testDescription: String { "\"\(text)\"" }
    }

    static let parseCases: [ParseCase] = [
        .init(text: "le:s16/16>>0", expected: .init(byteOrder: .littleEndian, isSigned: true, bits: 16, storageBits: 16)),
        .init(text: "be:u12/16>>4", expected: .init(byteOrder: .bigEndian, isSigned: false, bits: 12, storageBits: 16, shift: 4)),
        .init(text: "le:s64/64>>0", expected: .init(byteOrder: .littleEndian, isSigned: true, bits: 64, storageBits: 64)),
        .init(text: "le:s48/64>>2", expected: .init(byteOrder: .littleEndian, isSigned: true, bits: 48, storageBits: 64, shift: 2)),
        .init(text: "be:s24/32>>8", expected: .init(byteOrder: .bigEndian, isSigned: true, bits: 24, storageBits: 32, shift: 8)),
        .init(text: "le:u8/8>>0", expected: .init(byteOrder: .littleEndian, isSigned: false, bits: 8, storageBits: 8)),
        .init(
            text: "le:s16/16X4>>0",
            expected: .init(byteOrder: .littleEndian, isSigned: true, bits: 16, storageBits: 16, repeatCount: 4)),
        .init(
            text: "be:u10/16X3>>6",
            expected: .init(byteOrder: .bigEndian, isSigned: false, bits: 10, storageBits: 16, shift: 6, repeatCount: 3)),
        .init(text: "le:S16/16>>0\n", expected: .init(byteOrder: .littleEndian, isSigned: true, bits: 16, storageBits: 16)),
        .init(text: "le:s16/16", expected: .init(byteOrder: .littleEndian, isSigned: true, bits: 16, storageBits: 16)),
        .init(text: "", expected: nil),
        .init(text: "xe:s16/16>>0", expected: nil),
        .init(text: "le:q16/16>>0", expected: nil),
        .init(text: "le:s16/24>>0", expected: nil),  // storage must be 8, 16, 32 or 64
        .init(text: "le:s17/16>>0", expected: nil),  // bits beyond storage
        .init(text: "le:s12/16>>5", expected: nil),  // bits + shift beyond storage
        .init(text: "le:s0/16>>0", expected: nil),
        .init(text: "le:s16/16X0>>0", expected: nil),
        .init(text: "le:s16/16>>0 junk", expected: nil),
    ]

    @Test(arguments: parseCases)
    func parses(_ testCase: ParseCase) {
        #expect(ScanElementType(parsing: testCase.text) == testCase.expected)
    }

    @Test func printsTheKernelForm() {
        #expect(ScanElementType(parsing: "be:u10/16X3>>6")?.description == "be:u10/16X3>>6")
        #expect(ScanElementType(parsing: "le:s16/16")?.description == "le:s16/16>>0")
    }

    struct DecodeCase: CustomTestStringConvertible, Sendable {
        let type: String
        let bytes: [UInt8]
        let element: Int
        let expected: Int64
        var testDescription: String { "\(type) \(bytes) [\(element)] = \(expected)" }
    }

    static let decodeCases: [DecodeCase] = [
        .init(type: "le:s16/16>>0", bytes: [0x00, 0xFC], element: 0, expected: -1024),
        .init(type: "be:s16/16>>0", bytes: [0xFC, 0x00], element: 0, expected: -1024),
        .init(type: "le:u16/16>>0", bytes: [0x00, 0xFC], element: 0, expected: 64512),
        // 12 bits left-aligned in 16: 0x800 << 4 = 0x8000 → −2048 signed, 2048 unsigned.
        .init(type: "le:s12/16>>4", bytes: [0x00, 0x80], element: 0, expected: -2048),
        .init(type: "le:u12/16>>4", bytes: [0x00, 0x80], element: 0, expected: 2048),
        .init(type: "be:s12/16>>4", bytes: [0x7F, 0xF0], element: 0, expected: 2047),
        // Bits outside bits/shift (noise in the low nibble, junk above) are masked off.
        .init(type: "le:s12/16>>4", bytes: [0x1F, 0x00], element: 0, expected: 1),
        .init(type: "le:s10/16>>0", bytes: [0xFF, 0xFF], element: 0, expected: -1),
        // 0xFEFF: the low 10 bits are 0x2FF (bit 9 set → −257 signed), the 6 bits above are ignored.
        .init(type: "le:s10/16>>0", bytes: [0xFF, 0xFE], element: 0, expected: -257),
        .init(type: "le:u10/16>>0", bytes: [0xFF, 0xFE], element: 0, expected: 767),
        .init(type: "le:s10/16>>0", bytes: [0xFF, 0xFD], element: 0, expected: 511),
        .init(type: "le:s8/8>>0", bytes: [0x80], element: 0, expected: -128),
        .init(type: "le:u8/8>>0", bytes: [0x80], element: 0, expected: 128),
        .init(type: "le:s24/32>>8", bytes: [0x00, 0x00, 0x00, 0x80], element: 0, expected: -8_388_608),
        .init(type: "be:s24/32>>0", bytes: [0x00, 0x80, 0x00, 0x00], element: 0, expected: -8_388_608),
        .init(type: "le:s32/32>>0", bytes: [0xFF, 0xFF, 0xFF, 0x7F], element: 0, expected: Int64(Int32.max)),
        .init(
            type: "le:s64/64>>0", bytes: [0x00, 0xCA, 0x9A, 0x3B, 0x00, 0x00, 0x00, 0x00], element: 0,
            expected: 1_000_000_000),
        .init(
            type: "be:s64/64>>0", bytes: [0x80, 0, 0, 0, 0, 0, 0, 0], element: 0, expected: Int64.min),
        .init(
            type: "le:s48/64>>2", bytes: [0xFC, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x03, 0x00], element: 0, expected: -1),
        .init(type: "le:s16/16X3>>0", bytes: [0x01, 0x00, 0xFE, 0xFF, 0x03, 0x00], element: 1, expected: -2),
        .init(type: "be:u16/16X3>>0", bytes: [0x00, 0x01, 0x00, 0x02, 0x01, 0x00], element: 2, expected: 256),
    ]

    @Test(arguments: decodeCases)
    func decodes(_ testCase: DecodeCase) throws {
        let type = try #require(ScanElementType(parsing: testCase.type))
        let value = testCase.bytes.withUnsafeBytes { type.decode($0, at: 0, element: testCase.element) }
        #expect(value == testCase.expected)
    }

    @Test func decodesAtAnOffset() throws {
        let type = try #require(ScanElementType(parsing: "be:s16/16>>0"))
        let bytes: [UInt8] = [0xEE, 0xEE, 0xFF, 0xFE]
        #expect(bytes.withUnsafeBytes { type.decode($0, at: 2) } == -2)
    }
}

@Suite struct ScanLayoutTests {
    struct LayoutCase: CustomTestStringConvertible, Sendable {
        let name: String
        let channels: [(index: Int, type: String)]
        let offsets: [Int]  // in index order
        let scanSize: Int
        var testDescription: String { name }
    }

    static let cases: [LayoutCase] = [
        .init(
            name: "three s16 and a timestamp (the lis3dh fixture)",
            channels: [(0, "le:s16/16>>0"), (1, "le:s16/16>>0"), (2, "le:s16/16>>0"), (3, "le:s64/64>>0")],
            offsets: [0, 2, 4, 8], scanSize: 16),
        .init(
            name: "three s16/32 and a timestamp (iio-sensor-proxy's buffer test)",
            channels: [(0, "le:s16/32>>0"), (1, "le:s16/32>>0"), (2, "le:s16/32>>0"), (3, "le:s64/64>>0")],
            offsets: [0, 4, 8, 16], scanSize: 24),
        .init(
            name: "three s16 alone: no padding beyond the largest element",
            channels: [(0, "le:s16/16>>0"), (1, "le:s16/16>>0"), (2, "le:s16/16>>0")],
            offsets: [0, 2, 4], scanSize: 6),
        .init(
            name: "indices need not be contiguous, and are sorted",
            channels: [(7, "le:s64/64>>0"), (2, "le:s16/16>>0"), (0, "le:u8/8>>0")],
            offsets: [0, 2, 8], scanSize: 16),
        .init(
            name: "s48 in 64 bits sits on an 8-byte boundary",
            channels: [(0, "le:u8/8>>0"), (1, "le:s48/64>>2")],
            offsets: [0, 8], scanSize: 16),
        .init(
            name: "a 24-bit value in 32 bits after a byte",
            channels: [(0, "be:u8/8>>0"), (1, "be:s24/32>>8"), (2, "be:s24/32>>8")],
            offsets: [0, 4, 8], scanSize: 12),
        .init(
            name: "a repeat of 4 aligns to its whole size",
            channels: [(0, "le:s16/16>>0"), (1, "le:s16/16X4>>0"), (2, "le:s64/64>>0")],
            offsets: [0, 8, 16], scanSize: 24),
        .init(
            name: "two s16 and a timestamp pad to 8 before it",
            channels: [(0, "le:s16/16>>0"), (1, "le:s16/16>>0"), (2, "le:s64/64>>0")],
            offsets: [0, 2, 8], scanSize: 16),
        .init(
            name: "an IMU: six s16 and a timestamp",
            channels: (0..<6).map { ($0, "le:s16/16>>0") } + [(6, "le:s64/64>>0")],
            offsets: [0, 2, 4, 6, 8, 10, 16], scanSize: 24),
    ]

    @Test(arguments: cases)
    func laysOut(_ testCase: LayoutCase) throws {
        let channels = try testCase.channels.map { (index: $0.index, type: try #require(ScanElementType(parsing: $0.type))) }
        let layout = ScanLayout(channels: channels)
        #expect(layout.elements.map(\.offset) == testCase.offsets)
        #expect(layout.elements.map(\.index) == testCase.channels.map(\.index).sorted())
        #expect(layout.scanSize == testCase.scanSize)
    }

    /// The test support's independent encoder and the decoder agree on every case: values survive the trip.
    @Test(arguments: cases)
    func roundTripsThroughTheEncoder(_ testCase: LayoutCase) throws {
        let channels = try testCase.channels.map { (index: $0.index, type: try #require(ScanElementType(parsing: $0.type))) }
        let layout = ScanLayout(channels: channels)
        let encoder = ScanEncoder(channels: testCase.channels)
        #expect(encoder.scanSize == layout.scanSize)
        // One value per element, the largest negative (or largest unsigned) that fits its bits.
        let values: [[Int64]] = layout.elements.map { element in
            let type = element.type
            let extreme: Int64 =
                type.bits == 64 ? Int64.min : (type.isSigned ? -(Int64(1) << (type.bits - 1)) : (Int64(1) << type.bits) - 1)
            return (0..<type.repeatCount).map { extreme + Int64($0) }
        }
        let scan = encoder.encode(values)
        scan.withUnsafeBytes { bytes in
            for (element, expected) in zip(layout.elements, values) {
                for repeatIndex in 0..<element.type.repeatCount {
                    #expect(element.type.decode(bytes, at: element.offset, element: repeatIndex) == expected[repeatIndex])
                }
            }
        }
    }
}
