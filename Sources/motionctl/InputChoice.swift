import ArgumentParser
import MotionCore

/// The inputs a command reads from: one of them per run.
enum Input: String, CaseIterable, Sendable {
    case trace = "--trace"
    case device = "--device"
    case service = "--service"
    case evaluate = "--evaluate"

    /// How the usage line writes it: `--trace FILE`.
    var usage: String {
        switch self {
        case .trace: "--trace FILE"
        case .device: "--device auto|NAME|PATH"
        case .service: "--service"
        case .evaluate: "--evaluate"
        }
    }
}

/// An option that applies to some inputs only (`--speed` to a trace, `--rate` to a device): given with another
/// input it is refused, naming why, never silently ignored.
struct InputSpecificOption {
    let name: String
    let given: Bool
    let inputs: [Input]

    init(_ name: String, given: Bool, for inputs: [Input]) {
        self.name = name
        self.given = given
        self.inputs = inputs
    }
}

extension [InputSpecificOption] {
    /// `--speed` and `--lenient`, given or not: a trace's options.
    static func traceOnly(speed: Bool, lenient: Bool) -> [InputSpecificOption] {
        [.init("--speed", given: speed, for: [.trace]), .init("--lenient", given: lenient, for: [.trace])]
    }
}

/// The one check of every command's input (`Docs/CLI.md`): exactly one of the inputs it `offers` is `chosen`,
/// and each option given applies to that input.
///
/// - Returns: The chosen input.
/// - Throws: A `ValidationError` naming what is missing or wrong: `Give an input: --trace FILE, …`, `Choose one of
///   --trace, --device and --service; given --trace and --device.`, `--rate applies to --device only, not to
///   --trace.`
@discardableResult
func validateInput(chosen: [Input], offers: [Input], options: [InputSpecificOption]) throws -> Input {
    precondition(chosen.allSatisfy(offers.contains), "an input the command does not offer")
    guard let input = chosen.first else {
        throw ValidationError("Give an input: \(listed(offers.map(\.usage), "or")).")
    }
    guard chosen.count == 1 else {
        throw ValidationError(
            "Choose one of \(listed(offers.map(\.rawValue), "and")); given \(listed(chosen.map(\.rawValue), "and")).")
    }
    for option in options where option.given && !option.inputs.contains(input) {
        let applies = listed(option.inputs.filter(offers.contains).map(\.rawValue), "and")
        throw ValidationError("\(option.name) applies to \(applies) only, not to \(input.rawValue).")
    }
    return input
}

/// `a`, `a or b`, `a, b, or c` (`a, b and c` with "and").
private func listed(_ words: [String], _ conjunction: String) -> String {
    switch words.count {
    case 0: return ""
    case 1: return words[0]
    case 2: return "\(words[0]) \(conjunction) \(words[1])"
    default:
        let comma = conjunction == "or" ? "," : ""
        return words.dropLast().joined(separator: ", ") + "\(comma) \(conjunction) \(words.last!)"
    }
}

/// `--sensors` on a device or the service: every sensor `asked` must be among those the input `have`s; else a usage
/// error that names the missing ones and what `holder` (the devices, or "it") has.
func requireAskedSensors(_ asked: SensorSet, have: SensorSet, input: String, holder: String) throws(MotionError) {
    guard !have.isSuperset(of: asked) else { return }
    throw MotionError(
        .invalidArgument,
        "--sensors asks for \(asked.subtracting(have)), which \(input) does not have: \(holder) has \(have); "
            + "choose --sensors among those")
}
