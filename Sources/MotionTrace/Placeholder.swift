enum MotionTracePlaceholder {}
