package cuda

import (
	"testing"

	"ember/inference/quant"
)

// TestRouteKernel: the fused routing's kernel by expert type and count, plain routing
// and $EMBER_CUDA_ROUTE_WIDE: the narrowest that takes it unless the variable widens it.
func TestRouteKernel(t *testing.T) {
	for _, c := range []struct {
		t     quant.Type
		x     int
		plain bool
		env   string
		want  string
		rows  int
	}{
		{quant.Q4_K, 64, true, "", "mmv_route_q4_k_64s", 4},
		{quant.Q4_K, 64, false, "", "mmv_route_q4_k_64", 4},
		{quant.Q4_K, 37, true, "64", "mmv_route_q4_k_64", 4},
		{quant.Q4_K, 64, true, "1", "mmv_route_q4_k", 4},
		{quant.Q4_K, 65, true, "", "mmv_route_q4_k", 4},
		{quant.Q4_K, 256, false, "64", "mmv_route_q4_k", 4},
		{quant.Q5_K, 64, true, "", "mmv_route_q5_k_64s", 2},
		{quant.Q5_K, 64, false, "", "mmv_route_q5_k", 2},
		{quant.Q5_K, 64, true, "64", "mmv_route_q5_k", 2},
		{quant.Q6_K, 64, true, "", "", 0},
	} {
		name, rows := routeKernel(c.t, c.x, c.plain, routeWideFromEnv(c.env))
		if name != c.want || rows != c.rows {
			t.Errorf("%v, %d experts, plain %v, wide %q: %s (%d rows), want %s (%d)", c.t, c.x, c.plain, c.env, name, rows, c.want, c.rows)
		}
	}
}
