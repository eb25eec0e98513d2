print("motionctl")
