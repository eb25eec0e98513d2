import Foundation
import Testing
import TestThreads

@testable import MotionTrace

@Suite(.computeBound) struct DecimalParserTests {
    @Test(arguments: [
        "0", "-0", "+0", "00", "0.0", "-0.000", "0e0", "0e-999", "-0e999", "1", "-1", "+1", "9", "10", "1.5", "-1.5",
        "0.0035", "186.336500", "-0.00887329394", "-6.52338106e-19", "16.1633417", "1e22", "1e23", "1E+22",
        "1e-22", "1e-23", "9007199254740992", "9007199254740993", "9007199254740991.5", "18446744073709551615",
        "18446744073709551616", "99999999999999999999", "1234567890123456789", "12345678901234567890",
        "0.1", "0.2", "0.3", "0.30000000000000004", "0.1000000000000000055511151231257827021181583404541015625",
        "2.2250738585072014e-308", "2.2250738585072011e-308", "4.9406564584124654e-324", "5e-324", "2e-324",
        "1e-400", "1.7976931348623157e308", "1.7976931348623158e308", "123456789012345.6",
        "0.000000000000000000000000000001", "100000000000000000000000000000000",
        "3.14159265358979323846264338327950288", "7.0e-10", "12345678.12345678", "00000000000000000000012.5",
        "1.00000000000000000000000000000000000001", "9.999999999999999e22", "8.98846567431158e307",
    ])
    func matchesDoubleInit(_ text: String) throws {
        let expected = try #require(Double(text))
        let parsed = try #require(parseNumber(text))
        #expect(parsed.bitPattern == expected.bitPattern, "\(text): \(parsed) vs \(expected)")
    }

    @Test(arguments: [
        "", "-", "+", ".", ".5", "5.", "-.5", "1e", "1e+", "1e-", "e5", "1.5.2", "1,5", " 1", "1 ", "nan", "NaN",
        "inf", "-inf", "Infinity", "0x10", "0x1p3", "1_000", "1d", "1f", "--1", "+-1", "1e5.5", "١", "1\u{0}",
    ])
    func rejectsOtherSyntax(_ text: String) {
        #expect(parseNumber(text) == nil, "\(text.debugDescription) should be rejected")
    }

    @Test(arguments: ["1e999", "-1e309", "1.8e308", "123e99999999999999999999"])
    func rejectsValuesBeyondDouble(_ text: String) {
        #expect(parseNumber(text) == nil)
        let field = Array((text + ",").utf8) + [UInt8](repeating: 0, count: DecimalParser.padding)
        field.withUnsafeBufferPointer { buffer in
            let start = buffer.baseAddress!
            #expect(DecimalParser.parseField(start, start + text.utf8.count + 1).status == .outOfRange)
        }
    }

    @Test func stopsAtComma() {
        let bytes = Array("-12.5e1,7".utf8) + [UInt8](repeating: 0, count: DecimalParser.padding)
        bytes.withUnsafeBufferPointer { buffer in
            let start = buffer.baseAddress!
            let (value, stop, status) = DecimalParser.parseField(start, start + 9)
            #expect(status == .number)
            #expect(value == -125)
            #expect(stop - start == 7)
        }
    }

    /// Random doubles (all exponents) as shortest, 17-digit and 25-digit text read back bit-identical.
    @Test func randomDoublesMatchDoubleInit() {
        var generator = SeededGenerator(seed: 1)
        var failures: [String] = []
        for _ in 0..<100_000 {
            let value = randomFiniteDouble(using: &generator)
            for text in [
                value.description, String(format: "%.16e", value), String(format: "%.24e", value),
                String(format: "%.17f", value),
            ] {
                guard let expected = Double(text), expected.isFinite else { continue }
                if parseNumber(text)?.bitPattern != expected.bitPattern { failures.append(text) }
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(10))")
    }

    /// Random decimal strings in the trace syntax (up to 25 digits, exponents across the whole range).
    @Test func randomDecimalsMatchDoubleInit() {
        var generator = SeededGenerator(seed: 2)
        var failures: [String] = []
        for _ in 0..<300_000 {
            var text = Bool.random(using: &generator) ? "-" : ""
            let integerDigits = Int.random(in: 1...12, using: &generator)
            let fractionDigits = Int.random(in: 0...13, using: &generator)
            for index in 0..<integerDigits {
                let leadingZero = index == 0 && Int.random(in: 0..<4, using: &generator) == 0
                text += leadingZero ? "0" : String(Int.random(in: 0...9, using: &generator))
            }
            if fractionDigits > 0 {
                text += "."
                for _ in 0..<fractionDigits { text += String(Int.random(in: 0...9, using: &generator)) }
            }
            switch Int.random(in: 0..<4, using: &generator) {
            case 0: text += "e\(Int.random(in: -30...30, using: &generator))"
            case 1: text += "E+\(Int.random(in: 0...330, using: &generator))"
            case 2: text += "e-\(Int.random(in: 0...345, using: &generator))"
            default: break
            }
            let expected = Double(text)!
            let parsed = parseNumber(text)
            if expected.isFinite {
                if parsed?.bitPattern != expected.bitPattern { failures.append(text) }
            } else if parsed != nil {
                failures.append(text)
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(10))")
    }
}
