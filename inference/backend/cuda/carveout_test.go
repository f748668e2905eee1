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
	t.Setenv(CarveoutKernelsEnv, "")
	b := &Backend{carve: 44, carved: carveoutKernelsFromEnv()} // any percentage
	for name, want := range map[string]int{"mmv_q8_0_1": 44, "mmv_multi_q8_0": 44, "mmv_multi": -1, "mmv_id_q8_0": -1, "mmv_q4_k_1": -1, "attention_dec128_q8": -1, "add_rms_norm_q8": -1, "mmq_q4_k": -1} {
		if c := b.carveoutFor(name); c != want {
			t.Errorf("default kernels, %s: %d, want %d", name, c, want)
		}
	}
	t.Setenv(CarveoutKernelsEnv, "all")
	b.carved = carveoutKernelsFromEnv()
	if c := b.carveoutFor("attention_dec128_q8"); c != 44 {
		t.Errorf("all: attention_dec128_q8 %d, want 44", c)
	}
	t.Setenv(CarveoutKernelsEnv, "mmq,attention")
	b.carved = carveoutKernelsFromEnv()
	if e := b.carved; len(e) != 2 || e[1] != "attention" {
		t.Errorf("mmq,attention: %q", e)
	}
	if c, d := b.carveoutFor("attention_dec128"), b.carveoutFor("mmv_q4_k_1"); c != 44 || d != -1 {
		t.Errorf("mmq,attention: attention_dec128 %d, mmv_q4_k_1 %d; want 44, -1", c, d)
	}
	b.carve = -1
	if c := b.carveoutFor("attention_dec128"); c != -1 {
		t.Errorf("carveout off: %d", c)
	}
}
