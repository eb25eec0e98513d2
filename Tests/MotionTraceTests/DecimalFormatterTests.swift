import Foundation
import Testing
import TestThreads

@testable import MotionTrace

@Suite(.computeBound) struct DecimalFormatterTests {
    @Test(
        arguments: [
            (0.0, "0"), (-0.0, "-0"), (1, "1"), (-1, "-1"), (100, "100"), (123000, "123000"), (1.5, "1.5"),
            (0.0035, "0.0035"), (186.3365, "186.3365"), (-0.00887329394, "-0.00887329394"), (0.000001, "0.000001"),
            (1e-7, "1e-7"), (1.5e-7, "1.5e-7"), (-6.52338106e-19, "-6.52338106e-19"), (1e21, "1e+21"),
            (1e20, "100000000000000000000"), (1.2345678901234568e20, "123456789012345680000"), (0.1, "0.1"),
            (0.30000000000000004, "0.30000000000000004"), (Double.leastNonzeroMagnitude, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"), (2.2250738585072014e-308, "2.2250738585072014e-308"),
            (1e100, "1e+100"), (16.1633417, "16.1633417"), (-42.7047423, "-42.7047423"), (0x1p53, "9007199254740992"),
        ] as [(Double, String)])
    func layout(_ value: Double, _ expected: String) {
        #expect(formatNumber(value) == expected)
    }

    /// The digits are the shortest that round-trip: the same as `description`'s, and the text reads back
    /// bit-identical with both `Double(String)` and the trace parser.
    @Test func randomValuesAreShortestAndRoundTrip() throws {
        var generator = SeededGenerator(seed: 3)
        var failures: [String] = []
        for _ in 0..<300_000 {
            let value = randomFiniteDouble(using: &generator)
            let text = formatNumber(value)
            let readBack = Double(text)
            if readBack?.bitPattern != value.bitPattern || parseNumber(text)?.bitPattern != value.bitPattern {
                failures.append("\(value.description) → \(text)")
            }
            if significantDigits(text) != significantDigits(value.description) {
                failures.append("\(value.description) → \(text) (not shortest)")
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(10))")
    }

    /// Powers of two and ten and their neighbours, all subnormals with small significands, and the
    /// boundaries between layouts.
    @Test func edgeValuesMatchDescription() {
        var values: [Double] = []
        for exponent in -1074...1023 {
            let power = Double(sign: .plus, exponent: exponent, significand: 1)
            values += [power, power.nextUp, power.nextDown]
        }
        for exponent in -325...308 {
            if let power = Double("1e\(exponent)") { values += [power, power.nextUp, power.nextDown] }
        }
        values += (1...20_000).map { Double(bitPattern: UInt64($0)) }
        values += [
            1e21.nextDown, 1e21, 9.999999999999999e20, 1e-6, 1e-6.nextDown, 1e-7, 0.000001234, 123e18,
            .greatestFiniteMagnitude, .leastNormalMagnitude, .leastNormalMagnitude.nextDown,
        ]
        var failures: [String] = []
        for value in values where value.isFinite && value > 0 {
            let text = formatNumber(value)
            if Double(text)?.bitPattern != value.bitPattern
                || significantDigits(text) != significantDigits(value.description)
            {
                failures.append("\(value.description) → \(text)")
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(10))")
    }

    @Test func eightDigitsConversion() {
        for value: UInt64 in [0, 1, 9, 10, 99, 100, 1234, 9999, 10000, 12_345_678, 99_999_999, 10_000_001] {
            let word = DecimalFormatter.eightDigits(value)
            let text = withUnsafeBytes(of: word) { String(decoding: $0, as: UTF8.self) }
            #expect(text == String(repeating: "0", count: 8 - String(value).count) + String(value))
        }
    }

    /// The integer approximations of ⌊log⌋ agree with floating point over the whole range used.
    @Test func floorLogarithms() {
        for q in -1100...1100 {
            #expect(DecimalFormatter.floorLog10Pow2(q) == Int((Double(q) * log10(2.0)).rounded(.down)))
            #expect(
                DecimalFormatter.floorLog10ThreeQuartersPow2(q)
                    == Int((Double(q) * log10(2.0) + log10(0.75)).rounded(.down)), "\(q)")
        }
        for e in -400...400 {
            #expect(DecimalFormatter.floorLog2Pow10(e) == Int((Double(e) * log2(10.0)).rounded(.down)))
        }
    }

    /// Table entries against values computed independently with exact rational arithmetic (Python
    /// `fractions`): g = ⌊10^-k · 2^-r⌋ + 1, split at bit 63.
    @Test func powersOfTenTable() {
        let table = PowersOfTen.shared
        let expected: [(Int, UInt64, UInt64)] = [
            (0, 0x4000_0000_0000_0000, 0x1), (-1, 0x5000_0000_0000_0000, 0x1),
            (1, 0x6666_6666_6666_6666, 0x3333_3333_3333_3334), (100, 0x6FFC_BB92_3814_BF5E, 0x565E_1F8A_E4EF_15BE),
            (-200, 0x539C_635F_5D89_68B6, 0x2D0A_3E2B_0059_5877), (292, 0x7FBB_D8FE_5F5E_6E27, 0x497A_3A27_04EE_C3DF),
            (-324, 0x4F0C_EDC9_5A71_8DD4, 0x5B01_E8B0_9AA0_D1B5),
        ]
        for (k, g1, g0) in expected {
            #expect(table[k] == (g1, g0), "k = \(k)")
        }
        for k in PowersOfTen.minimumK...PowersOfTen.maximumK {
            let (g1, g0) = table[k]
            #expect(g1 >= 1 << 62 && g1 < 1 << 63 && g0 < 1 << 63, "k = \(k)")
        }
    }

    /// The significant digits of a number's text, without sign, point, exponent and outer zeros.
    private func significantDigits(_ text: String) -> String {
        let mantissa = text.split(separator: "e").first.map(String.init) ?? text
        var digits = mantissa.filter(\.isNumber)
        while digits.hasPrefix("0") { digits.removeFirst() }
        while digits.hasSuffix("0") { digits.removeLast() }
        return digits
    }
}
