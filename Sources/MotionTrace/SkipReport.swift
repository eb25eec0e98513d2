/// What a lenient ``TraceReader`` skipped: how many rows, how many for each reason, and the first few.
public struct SkipReport: Hashable, Sendable, CustomStringConvertible {
    /// Why a row was skipped. New reasons may be added; switch with a `default`.
    public struct Reason: Hashable, Sendable, CustomStringConvertible {
        enum Kind: Int, Hashable, Sendable {
            case emptyLine, columnCount, invalidNumber, partialGroup, timestampOrder, truncatedLastLine
        }

        let kind: Kind

        /// An empty line among the rows.
        public static let emptyLine = Reason(kind: .emptyLine)
        /// A row with more or fewer fields than the header has columns.
        public static let columnCount = Reason(kind: .columnCount)
        /// A field that is not a finite number (including an empty `t` field and values such as `nan` or
        /// `1e999`).
        public static let invalidNumber = Reason(kind: .invalidNumber)
        /// A sensor group with some but not all of its three fields empty.
        public static let partialGroup = Reason(kind: .partialGroup)
        /// A timestamp earlier than the previous accepted row's.
        public static let timestampOrder = Reason(kind: .timestampOrder)
        /// A last line without a line terminator that does not parse (the trace was cut off).
        public static let truncatedLastLine = Reason(kind: .truncatedLastLine)

        /// Every reason, in the order reports list them.
        public static let allReasons: [Reason] = [
            .emptyLine, .columnCount, .invalidNumber, .partialGroup, .timestampOrder, .truncatedLastLine,
        ]

        /// A short phrase such as `wrong column count`.
        public var description: String {
            switch kind {
            case .emptyLine: "empty line"
            case .columnCount: "wrong column count"
            case .invalidNumber: "not a finite number"
            case .partialGroup: "partly empty sensor group"
            case .timestampOrder: "timestamp out of order"
            case .truncatedLastLine: "cut-off last line"
            }
        }
    }

    /// One skipped row, with the error a strict reader would have thrown for it.
    public struct Example: Hashable, Sendable, CustomStringConvertible {
        /// The 1-based line number.
        public var line: Int
        /// The column the problem is in (such as `ax`), or `nil` when it concerns the whole row.
        public var column: String?
        /// Why the row was skipped.
        public var reason: Reason
        /// What was expected and what was found.
        public var message: String

        /// `line 5, column 'ax': message`.
        public var description: String {
            "line \(line)" + (column.map { ", column '\($0)'" } ?? "") + ": " + message
        }
    }

    /// How many examples a report keeps.
    package static let maximumExamples = 5

    /// The file the report is about (`<stdin>` for standard input).
    public internal(set) var file: String
    /// The number of rows skipped.
    public internal(set) var skippedRows = 0
    /// The number of rows skipped for each reason; reasons with no skipped rows are absent.
    public internal(set) var counts: [Reason: Int] = [:]
    /// The first 5 skipped rows (`maximumExamples`), in file order.
    public internal(set) var examples: [Example] = []

    /// Creates an empty report for `file`.
    package init(file: String) {
        self.file = file
    }

    mutating func record(_ example: Example) {
        skippedRows += 1
        counts[example.reason, default: 0] += 1
        if examples.count < SkipReport.maximumExamples { examples.append(example) }
    }

    /// One paragraph: the total, the count for each reason, and the first examples with their line numbers.
    ///
    /// For example: `data.csv: skipped 3 rows (2 not a finite number, 1 timestamp out of order). First: line 5,
    /// column 'ax': expected a finite number, found "abc"; …`
    public var description: String {
        guard skippedRows > 0 else { return "\(file): no rows skipped." }
        let reasons = Reason.allReasons.compactMap { reason in counts[reason].map { "\($0) \(reason)" } }
        var text =
            "\(file): skipped \(skippedRows) row\(skippedRows == 1 ? "" : "s") (\(reasons.joined(separator: ", ")))."
        text += (examples.count == skippedRows ? " " : " First: ")
        text += examples.map(\.description).joined(separator: "; ") + "."
        return text
    }
}
