package app

import "ember/inference/sample"

// The app's sampling defaults, which a chat's own settings override.
const (
	defaultTemperature = 0.7
	defaultTopK        = 40
	defaultTopP        = 0.95
	defaultMinP        = 0.05
	defaultMaxTokens   = 1024
)

// DefaultSampling is how a chat draws its tokens unless its settings say otherwise (and
// how the serving bench's -sample streams draw theirs).
func DefaultSampling() sample.Params {
	return sample.Params{Temperature: defaultTemperature, TopK: defaultTopK, TopP: defaultTopP, MinP: defaultMinP}
}
