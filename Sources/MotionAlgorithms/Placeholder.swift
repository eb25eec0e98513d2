enum MotionAlgorithmsPlaceholder {}
