import Foundation
import Motion
import MotionAlgorithms
import MotionCore
import MotionTesting
import Testing

/// `MotionProcessor`'s device motion: in each requested frame, what a `DeviceMotionFilter` of that frame gives for
/// the sample, value for value; `nil` in the other frames and for samples that give none.
@Suite struct MotionProcessorTests {
    /// 15 s of random motion at 100 Hz with every sensor: the first 0.2 s without the gyroscope (no device motion
    /// yet), and at 5 s a sample with a NaN timestamp (ignored: none for it).
    static func input() throws -> [MotionSample] {
        let options = SimulationOptions(rate: 100, sensors: .all, seed: 5, magnetometerOffset: SIMD3(20, -10, 30))
        var samples = Array(try Simulation(scenario: .random(seed: 5), options: options).prefix(1500))
        for i in 0..<20 { samples[i] = samples[i].restricted(to: [.accelerometer, .magnetometer]) }
        samples.insert(MotionSample(timestamp: .nan, acceleration: samples[500].acceleration), at: 500)
        return samples
    }

    /// The filter `MotionProcessor` runs for `frame` with `configuration`.
    static func filter(_ frame: AttitudeReferenceFrame, _ configuration: MotionConfiguration) -> DeviceMotionFilter {
        DeviceMotionFilter(
            referenceFrame: frame, magneticDeclination: configuration.magneticDeclination * .pi / 180,
            predictionInterval: configuration.predictionInterval, configuration: configuration.attitude)
    }

    @Test("Device motion in each requested frame is its filter's value for the sample, and nil elsewhere")
    func deviceMotionIsTheFiltersValue() throws {
        let samples = try Self.input()
        let requested: Set<AttitudeReferenceFrame> = [.xArbitraryZVertical, .xMagneticNorthZVertical, .xTrueNorthZVertical]
        let configuration = MotionConfiguration(magneticDeclination: 4)
        var processor = MotionProcessor(configuration: configuration, request: .init(referenceFrames: requested))
        var filters = Dictionary(uniqueKeysWithValues: requested.map { ($0, Self.filter($0, configuration)) })
        var produced = 0
        var mismatches = 0
        for sample in samples {
            processor.process(sample)
            var any = false
            for frame in AttitudeReferenceFrame.allCases {
                let expected = filters[frame]?.update(sample)
                let motion = processor.outputs.deviceMotion(in: frame)
                if motion != expected { mismatches += 1 }
                any = any || motion != nil
            }
            if any { produced += 1 }
            #expect(processor.outputs.isEmpty == !any)
        }
        #expect(mismatches == 0)
        // Every sample but the 20 without a gyroscope and the one with a NaN timestamp.
        #expect(produced == samples.count - 21)
        #expect(processor.outputs.deviceMotion(in: .xArbitraryCorrectedZVertical) == nil)
    }

    @Test("A frame dropped from the request has no device motion; requested again, it starts afresh from what the others learned")
    func droppedFrameStartsAfresh() throws {
        let samples = try Self.input()
        let configuration = MotionConfiguration()
        let both: Set<AttitudeReferenceFrame> = [.xArbitraryZVertical, .xMagneticNorthZVertical]
        var processor = MotionProcessor(configuration: configuration, request: .init(referenceFrames: both))
        for sample in samples[..<300] { processor.process(sample) }
        #expect(processor.outputs.deviceMotion(in: .xMagneticNorthZVertical) != nil)

        processor.setRequest(.init(referenceFrames: [.xArbitraryZVertical]))
        #expect(processor.outputs.deviceMotion(in: .xMagneticNorthZVertical) == nil)
        processor.process(samples[300])
        #expect(processor.outputs.deviceMotion(in: .xMagneticNorthZVertical) == nil)
        #expect(processor.outputs.deviceMotion(in: .xArbitraryZVertical) != nil)

        // What the arbitrary frame's filter has learned (gyroscope bias, calibration) carries over.
        let learned = try #require(processor.calibration)
        processor.setRequest(.init(referenceFrames: both))
        #expect(Self.northMismatches(&processor, startedFrom: learned, over: samples[301..<600]) == 0)
    }

    /// Feeds `samples` to `processor` and counts the samples whose magnetic-north device motion differs from a
    /// new filter's started from `learned`.
    static func northMismatches(
        _ processor: inout MotionProcessor, startedFrom learned: DeviceMotionFilter.State,
        over samples: ArraySlice<MotionSample>
    ) -> Int {
        var fresh = DeviceMotionFilter(
            referenceFrame: .xMagneticNorthZVertical, magneticDeclination: 0, predictionInterval: 0,
            calibratedFrom: learned)
        var mismatches = 0
        for sample in samples {
            processor.process(sample)
            if processor.outputs.deviceMotion(in: .xMagneticNorthZVertical) != fresh.update(sample) { mismatches += 1 }
        }
        return mismatches
    }

    /// A service stops by dropping every subscription, so the producer may apply an empty request before it ends:
    /// what the filters learned must survive that, to be saved (it was lost, and motiond saved no calibration).
    @Test("Dropping every frame keeps what the filters learned as the calibration, for saving and for the next filters")
    func droppingEveryFrameKeepsWhatWasLearned() throws {
        let samples = try Self.input()
        var processor = MotionProcessor(request: .init(referenceFrames: [.xMagneticNorthZVertical]))
        for sample in samples[..<300] { processor.process(sample) }
        let learned = try #require(processor.calibration)
        #expect(MotionConfiguration().calibration == nil, "the configured calibration cannot stand in for it")

        processor.setRequest(.init(shake: true))
        for sample in samples[300..<310] { processor.process(sample) }
        #expect(processor.outputs.deviceMotion(in: .xMagneticNorthZVertical) == nil)
        let kept = try #require(processor.calibration)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        #expect(try encoder.encode(kept) == encoder.encode(learned))

        // Requested again, device motion starts from it.
        processor.setRequest(.init(referenceFrames: [.xMagneticNorthZVertical]))
        #expect(Self.northMismatches(&processor, startedFrom: learned, over: samples[310..<400]) == 0)
    }
}
