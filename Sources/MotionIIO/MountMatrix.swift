public import MotionCore

/// A sensor's mount matrix: how to turn its axes into the device frame, as `corrected = M · raw`.
///
/// Each row gives one corrected axis: corrected x = ``xRow`` · (raw x, raw y, raw z), and likewise for y and z.
/// This is how the kernel's `iio_show_mount_matrix` text, systemd's `ACCEL_MOUNT_MATRIX` (60-sensor.hwdb) and
/// iio-sensor-proxy's `apply_mount_matrix` are meant: the i-th `;`-separated group is the i-th output axis.
/// (iio-sensor-proxy's README describes the transpose, `raw · M`; the two agree only for symmetric matrices.)
///
/// The text form is `x1, y1, z1; x2, y2, z2; x3, y3, z3`, for example `0, 1, 0; -1, 0, 0; 0, 0, 1`.
/// Matrices are not checked for orthogonality: hwdb entries include reflections, and some include scale.
public struct MountMatrix: Hashable, Sendable, CustomStringConvertible {
    /// The row that gives the corrected x axis.
    public var xRow: SIMD3<Double>
    /// The row that gives the corrected y axis.
    public var yRow: SIMD3<Double>
    /// The row that gives the corrected z axis.
    public var zRow: SIMD3<Double>

    /// Creates a matrix from its rows.
    public init(xRow: SIMD3<Double>, yRow: SIMD3<Double>, zRow: SIMD3<Double>) {
        self.xRow = xRow
        self.yRow = yRow
        self.zRow = zRow
    }

    /// The identity: the sensor's axes are the device's.
    public static let identity = MountMatrix(xRow: [1, 0, 0], yRow: [0, 1, 0], zRow: [0, 0, 1])

    /// `M · vector`: the reading in the device frame.
    @inlinable
    public func apply(to vector: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3((xRow * vector).sum(), (yRow * vector).sum(), (zRow * vector).sum())
    }

    /// Parses `x1, y1, z1; x2, y2, z2; x3, y3, z3`, independently of the C locale (a decimal point is always `.`).
    ///
    /// White space around numbers and a trailing newline are allowed. An empty text (or a lone newline, as an
    /// empty sysfs attribute reads) is the identity, as in iio-sensor-proxy's `parse_mount_matrix`. Otherwise
    /// the text is rejected when it does not have exactly three `;`-separated rows of three `,`-separated
    /// numbers, when a number is not a finite decimal, or when a row is all zeros (that axis would read 0
    /// forever, as iio-sensor-proxy also rejects).
    /// A rejection is a `MotionError.Code.invalidArgument` whose message quotes the text and says why:
    /// `mount matrix "…" has an all-zero row for axis z`.
    public static func parse(_ text: String) -> Result<MountMatrix, MotionError> {
        if text.isEmpty || text == "\n" { return .success(.identity) }
        let rows = text.split(separator: ";", omittingEmptySubsequences: false)
        guard rows.count == 3 else {
            return .failure(rejection("does not have 3 rows separated by ';'", text))
        }
        var parsed: [SIMD3<Double>] = []
        for (rowIndex, row) in rows.enumerated() {
            let fields = row.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count == 3 else {
                return .failure(
                    rejection("row \(rowIndex + 1) does not have 3 numbers separated by ','", text))
            }
            var values = SIMD3<Double>()
            for (column, field) in fields.enumerated() {
                let trimmed = field.trimmingWhiteSpace()
                // `Double(_:)` parses with the C locale's rules whatever the process locale is.
                guard trimmed.allSatisfy({ "0123456789+-.eE".contains($0) }), let value = Double(trimmed), value.isFinite
                else {
                    return .failure(rejection("has \"\(trimmed)\", which is not a number", text))
                }
                values[column] = value
            }
            guard values != .zero else {
                let axis = ["x", "y", "z"][rowIndex]
                return .failure(rejection("has an all-zero row for axis \(axis)", text))
            }
            parsed.append(values)
        }
        return .success(MountMatrix(xRow: parsed[0], yRow: parsed[1], zRow: parsed[2]))
    }

    /// The kernel's text form, such as `0, 1, 0; -1, 0, 0; 0, 0, 1` (whole numbers without a fraction).
    public var description: String {
        [xRow, yRow, zRow].map { row in
            (0..<3).map { MountMatrix.format(row[$0]) }.joined(separator: ", ")
        }.joined(separator: "; ")
    }

    /// `mount matrix "text" reason`.
    private static func rejection(_ reason: String, _ text: String) -> MotionError {
        MotionError(.invalidArgument, "mount matrix \"\(text)\" \(reason)")
    }

    static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 {
            return value == 0 ? "0" : String(Int64(value))
        }
        return "\(value)"
    }
}

extension Substring {
    /// The text without leading and trailing spaces, tabs and line breaks.
    func trimmingWhiteSpace() -> Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" || first == "\n" || first == "\r" {
            text.removeFirst()
        }
        while let last = text.last, last == " " || last == "\t" || last == "\n" || last == "\r" {
            text.removeLast()
        }
        return text
    }

}
