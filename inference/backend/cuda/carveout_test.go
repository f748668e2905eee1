package cuda

import "testing"

func TestCarveoutFromEnv(t *testing.T) {
	for _, c := range []struct {
		v    string
		want int
	}{{"", defaultCarveout}, {"off", -1}, {"-1", -1}, {"0", 0}, {"36", 36}, {"100", 100}, {"101", -1}} {
		t.Setenv(CarveoutEnv, c.v)
		if got := carveoutFromEnv(); got != c.want {
			t.Errorf("%s=%q: %d, want %d", CarveoutEnv, c.v, got, c.want)
		}
	}
}
