import MotionCore
import Testing
import TestThreads

/// Pins the frame and rotation conventions written in Docs/Conventions.md.
@Suite(.computeBound) struct AttitudeConventionTests {
    /// Deterministic pseudo-random attitudes (SplitMix64), so failures reproduce.
    static func randomAttitudes(count: Int, seed: UInt64 = 0x5EED) -> [Attitude] {
        var state = seed
        func next() -> Double {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            return Double(z >> 11) / Double(1 << 53) * 2 - 1
        }
        return (0..<count).map { _ in
            Attitude(quaternion: Quaternion(w: next(), x: next(), y: next(), z: next()))
        }
    }

    static func expectClose(_ a: SIMD3<Double>, _ b: SIMD3<Double>, tolerance: Double = 1e-12,
                            sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(((a - b) * (a - b)).sum().squareRoot() < tolerance, "\(a) vs \(b)", sourceLocation: sourceLocation)
    }

    @Test func faceUpIdentityReadsGravityAlongMinusZ() {
        Self.expectClose(Attitude.identity.gravity.vector, SIMD3(0, 0, -1))
    }

    @Test func portraitUprightReadsGravityAlongMinusY() {
        // Top of the device up: a quarter turn about the device x axis from face up (pitch +90°).
        let portrait = Attitude(roll: 0, pitch: .pi / 2, yaw: 0)
        Self.expectClose(portrait.gravity.vector, SIMD3(0, -1, 0))
    }

    @Test func landscapeLeftReadsGravityAlongMinusX() {
        // Right side of the device up: from portrait, a quarter turn about the screen normal (z).
        let portrait = Attitude(roll: 0, pitch: .pi / 2, yaw: 0).quaternion
        let rightSideUp = Attitude(quaternion: portrait * Quaternion(angle: .pi / 2, axis: SIMD3(0, 0, 1)))
        Self.expectClose(rightSideUp.gravity.vector, SIMD3(-1, 0, 0))
    }

    @Test func seedGravityFormulaHoldsForTheRotationMatrix() {
        for attitude in Self.randomAttitudes(count: 200) {
            let r = attitude.rotationMatrix
            let formula = r * SIMD3(0, 0, -1)
            // Independent derivation: the earth's down direction seen from the device, q* · (0,0,−1) · q.
            let rotated = attitude.quaternion.conjugate.act(on: SIMD3(0, 0, -1))
            Self.expectClose(formula, rotated)
            Self.expectClose(attitude.gravity.vector, formula)
        }
    }

    @Test func quaternionMapsDeviceToReference() {
        // A device turned 90° about the vertical (yaw) has its x axis pointing along the reference y axis.
        let turned = Attitude(roll: 0, pitch: 0, yaw: .pi / 2)
        Self.expectClose(turned.quaternion.act(on: SIMD3(1, 0, 0)), SIMD3(0, 1, 0))
        // ...and the rotation matrix maps the reference y axis back to the device x axis.
        Self.expectClose(turned.rotationMatrix * SIMD3(0, 1, 0), SIMD3(1, 0, 0))
    }

    @Test func rightHandRule() {
        let q = Quaternion<Double>(angle: .pi / 2, axis: SIMD3(0, 0, 1))
        Self.expectClose(q.act(on: SIMD3(1, 0, 0)), SIMD3(0, 1, 0))
        Self.expectClose(q.rotationMatrix * SIMD3(0, 1, 0), SIMD3(-1, 0, 0))
    }

    @Test func eulerAnglesRoundTrip() {
        for attitude in Self.randomAttitudes(count: 300) {
            let rebuilt = Attitude(roll: attitude.roll, pitch: attitude.pitch, yaw: attitude.yaw)
            #expect(rebuilt.angle(to: attitude) < 1e-9)
            #expect(attitude.pitch >= -.pi / 2 && attitude.pitch <= .pi / 2)
        }
    }

    @Test func eulerAnglesHaveTheirDocumentedAxes() {
        let pitchOnly = Attitude(quaternion: Quaternion(angle: 0.3, axis: SIMD3(1, 0, 0)))
        #expect(abs(pitchOnly.pitch - 0.3) < 1e-12 && abs(pitchOnly.roll) < 1e-12 && abs(pitchOnly.yaw) < 1e-12)
        let rollOnly = Attitude(quaternion: Quaternion(angle: -0.7, axis: SIMD3(0, 1, 0)))
        #expect(abs(rollOnly.roll + 0.7) < 1e-12 && abs(rollOnly.pitch) < 1e-12 && abs(rollOnly.yaw) < 1e-12)
        let yawOnly = Attitude(quaternion: Quaternion(angle: 2.5, axis: SIMD3(0, 0, 1)))
        #expect(abs(yawOnly.yaw - 2.5) < 1e-12 && abs(yawOnly.roll) < 1e-12 && abs(yawOnly.pitch) < 1e-12)
    }

    @Test func gimbalLockPutsTheTurnInYaw() {
        let locked = Attitude(roll: 0, pitch: .pi / 2, yaw: 0.4)
        #expect(abs(locked.pitch - .pi / 2) < 1e-6)
        let rebuilt = Attitude(roll: locked.roll, pitch: locked.pitch, yaw: locked.yaw)
        #expect(rebuilt.angle(to: locked) < 1e-6)
    }

    @Test func rotationMatrixRoundTrip() {
        var attitudes = Self.randomAttitudes(count: 300)
        // Half turns exercise every branch of the matrix-to-quaternion conversion.
        for axis in [SIMD3<Double>(1, 0, 0), SIMD3(0, 1, 0), SIMD3(0, 0, 1), SIMD3(1, 1, 0)] {
            attitudes.append(Attitude(quaternion: Quaternion(angle: .pi, axis: axis)))
            attitudes.append(Attitude(quaternion: Quaternion(angle: .pi - 1e-9, axis: axis)))
        }
        for attitude in attitudes {
            #expect(Attitude(rotationMatrix: attitude.rotationMatrix).angle(to: attitude) < 1e-7)
            #expect(Quaternion(rotationMatrix: attitude.quaternion.rotationMatrix).angle(to: attitude.quaternion) < 1e-7)
        }
    }

    @Test func actOnAgreesWithTheMatrix() {
        let v = SIMD3<Double>(0.3, -1.2, 2.0)
        for attitude in Self.randomAttitudes(count: 100) {
            Self.expectClose(attitude.quaternion.act(on: v), attitude.quaternion.rotationMatrix * v)
        }
    }

    /// The seed's listing 4-12 (baseball bat): the attitude relative to one saved at the start of a swing.
    @Test func multiplyByInverseOfGivesTheChangeSinceTheReference() {
        for reference in Self.randomAttitudes(count: 50) {
            var same = reference
            same.multiply(byInverseOf: reference)
            #expect(same.angle(to: .identity) < 1e-9)

            // The bat turns 0.8 rad about its own x axis after the reference was saved.
            var swung = Attitude(quaternion: reference.quaternion * Quaternion(angle: 0.8, axis: SIMD3(1, 0, 0)))
            swung.multiply(byInverseOf: reference)
            #expect(abs(swung.pitch - 0.8) < 1e-9)
            #expect(abs(swung.roll) < 1e-9 && abs(swung.yaw) < 1e-9)
        }
    }

    @Test(arguments: [Float(0.5), 1.5, 3])
    func floatQuaternionsRotateLikeDoubles(angle: Float) {
        let qf = Quaternion<Float>(angle: angle, axis: SIMD3(1, 2, 3))
        let qd = Quaternion<Double>(angle: Double(angle), axis: SIMD3(1, 2, 3))
        let vf = qf.act(on: SIMD3(1, 0, 0))
        let vd = qd.act(on: SIMD3(1, 0, 0))
        #expect(abs(Double(vf.x) - vd.x) < 1e-6 && abs(Double(vf.y) - vd.y) < 1e-6 && abs(Double(vf.z) - vd.z) < 1e-6)
        #expect(Quaternion<Double>(qf).angle(to: qd) < 1e-3)
    }
}
