/// swift-motion's release, for `motionctl --version` and bug reports.
public enum SwiftMotion {
    /// The version, `MAJOR.MINOR.PATCH` (semantic versioning; 0.x while the API settles).
    public static let version = "0.1.0"
}
