import IIOTestbed
import Testing

/// `.requires(…)`: a missing prerequisite skips a test outside CI and fails it under CI.
@Suite struct PrerequisiteTests {
    static let missing = Prerequisite("a unicorn", help: "install unicorn") { false }
    static let present = Prerequisite("a horse", help: "install horse") { true }

    @Test func runsWhenNothingIsMissing() {
        #expect(Prerequisite.outcome(missing: [], underCI: false) == .run)
        #expect(Prerequisite.outcome(missing: [], underCI: true) == .run)
    }

    @Test func skipsOutsideCINamingWhatIsMissing() {
        #expect(
            Prerequisite.outcome(missing: [Self.missing], underCI: false) == .skip("missing: a unicorn (install unicorn)"))
    }

    @Test func failsUnderCINamingWhatIsMissing() {
        let both = "a unicorn (install unicorn); a unicorn (install unicorn)"
        #expect(
            Prerequisite.outcome(missing: [Self.missing, Self.missing], underCI: true)
                == .fail("CI requires this test to run, but it is missing: \(both)"))
    }

    /// The trait itself, in whichever mode this process runs (`CI` is read from the environment).
    @Test func traitSkipsOrThrowsAccordingToCI() async throws {
        #expect(try await ConditionTrait.requires(Self.present).evaluate())
        let trait = ConditionTrait.requires(Self.present, Self.missing)
        #expect(trait.comments.map(\.rawValue) == ["missing: a unicorn (install unicorn)"])
        if Testbed.isRequired {
            await #expect(throws: MissingPrerequisite.self) { try await trait.evaluate() }
        } else {
            #expect(try await trait.evaluate() == false)
        }
    }
}
