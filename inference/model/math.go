package model

import "math"

func sqrtf(x float32) float32 { return float32(math.Sqrt(float64(x))) }
