package sample

import "math"

// maskedTries is how many drawn tokens SampleMasked refuses one by one before it masks
// every refused token of the vocabulary at once. A draw over a large vocabulary costs
// about what a pass of a JSON constraint over it does (engine's BenchmarkJSONMaskedDraw,
// 102,400 tokens: 16 tries took 3.0 ms greedy and 5.7 sampled where few tokens are
// allowed, 2 take 1.4 and 1.8), and where many are allowed the first draws pass.
const maskedTries = 2

// SampleMasked draws as Sample does, from the tokens allowed (constrained decoding: a
// JSON reply), and accepts the token: each refused draw is struck from logits (set to
// -Inf) and drawn again, and after maskedTries refusals every token allowed refuses is
// struck at once. When none is allowed it returns the last token drawn.
func (s *Sampler) SampleMasked(logits []float32, allowed func(id int32) bool) int32 {
	if s.p.Penalties.Active() {
		s.hist.apply(logits, s.p.Penalties)
	}
	ninf := float32(math.Inf(-1))
	id := s.draw(logits)
	for try := 0; !allowed(id); try++ {
		if try == maskedTries {
			any := false
			for i := range logits {
				if logits[i] != ninf {
					if allowed(int32(i)) {
						any = true
					} else {
						logits[i] = ninf
					}
				}
			}
			if !any {
				break
			}
		} else {
			logits[id] = ninf
		}
		id = s.draw(logits)
	}
	s.Accept(id)
	return id
}
