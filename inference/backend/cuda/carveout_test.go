package cuda

import "testing"

func TestCarveoutFromEnv(t *testing.T) {
	for _, c := range []struct {
		v    string
		want int
	}{{"", defaultCarveout}, {"off", -1}, {"44", 44}, {"-1", -1}, {"0", 0}, {"36", 36}, {"100", 100}, {"101", -1}} {
		t.Setenv(CarveoutEnv, c.v)
		if got := carveoutFromEnv(); got != c.want {
			t.Errorf("%s=%q: %d, want %d", CarveoutEnv, c.v, got, c.want)
		}
	}
}

func TestCarveoutFor(t *testing.T) {
	b := &Backend{carve: 44, uncarved: []string{"attention_dec"}}
	if defaultCarveoutExempt != nil {
		t.Errorf("defaultCarveoutExempt %q", defaultCarveoutExempt)
	}
	if c := b.carveoutFor("mmv_q8_0_1"); c != 44 {
		t.Errorf("mmv_q8_0_1: %d, want 44", c)
	}
	if c := b.carveoutFor("attention_dec128_q8"); c != -1 {
		t.Errorf("attention_dec128_q8: %d, want -1", c)
	}
	t.Setenv(CarveoutExemptEnv, "none")
	if e := carveoutExemptFromEnv(); e != nil {
		t.Errorf("none: %q", e)
	}
	t.Setenv(CarveoutExemptEnv, "mmq,attention")
	if e := carveoutExemptFromEnv(); len(e) != 2 || e[1] != "attention" {
		t.Errorf("mmq,attention: %q", e)
	}
}
