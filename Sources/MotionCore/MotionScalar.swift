public import RealModule

/// The floating-point types the algorithms are generic over: `Float` and `Double`.
///
/// A conforming type has the elementary functions of swift-numerics' `Real`, converts to and from other
/// binary floating-point types, and can be stored in SIMD vectors.
public protocol MotionScalar: Real, BinaryFloatingPoint, SIMDScalar, Codable, Sendable
where SIMD2Storage: Sendable, SIMD4Storage: Sendable, SIMD8Storage: Sendable, SIMD16Storage: Sendable {}

extension Float: MotionScalar {}
extension Double: MotionScalar {}
