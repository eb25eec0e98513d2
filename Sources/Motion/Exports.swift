// `import Motion` is enough for MotionManager's users: samples, units, attitude, errors and the source model
// come with it.
@_exported public import MotionCore
