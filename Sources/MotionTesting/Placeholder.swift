enum MotionTestingPlaceholder {}
