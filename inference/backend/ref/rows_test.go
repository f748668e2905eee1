package ref_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/cpu"
	"ember/inference/backend/ref"
	"ember/inference/quant"
)

// TestRowCopier: both host backends copy whole Q8_0 rows out and back in, and refuse
// rows outside the tensor, partial rows, tensors not held as raw bytes and a done
// context, with errors that name the backend.
func TestRowCopier(t *testing.T) {
	c, err := cpu.New(cpu.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, be := range []backend.Backend{ref.New(), c} {
		rc := be.(backend.RowCopier)
		who := "ref"
		if be == backend.Backend(c) {
			who = "cpu"
		}
		q, err := be.New(quant.Q8_0, 5, 64)
		if err != nil {
			t.Fatal(err)
		}
		const rb = 2 * 34
		data := make([]byte, 2*rb)
		for i := range data {
			data[i] = byte(i*7 + 3)
		}
		if err := rc.WriteRows(q, 3, data); err != nil {
			t.Fatalf("%s: %v", who, err)
		}
		got, err := rc.ReadRows(context.Background(), q, 3, 2)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s: read back %v, %v", who, got, err)
		}
		if z, err := rc.ReadRows(context.Background(), q, 0, 1); err != nil || !bytes.Equal(z, make([]byte, rb)) {
			t.Errorf("%s: an unwritten row: %v, %v", who, z, err)
		}
		f, err := be.New(quant.F32, 2, 4)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		for name, err := range map[string]error{
			"past the end":  rc.WriteRows(q, 4, data),
			"partial row":   rc.WriteRows(q, 0, data[:rb+1]),
			"F32":           rc.WriteRows(f, 0, make([]byte, 16)),
			"negative row":  func() error { _, err := rc.ReadRows(context.Background(), q, -1, 1); return err }(),
			"read past end": func() error { _, err := rc.ReadRows(context.Background(), q, 4, 2); return err }(),
			"cancelled":     func() error { _, err := rc.ReadRows(ctx, q, 0, 1); return err }(),
		} {
			if err == nil {
				t.Errorf("%s: %s: no error", who, name)
			} else if name != "cancelled" && !strings.HasPrefix(err.Error(), who+": ") {
				t.Errorf("%s: %s: %v does not name the backend", who, name, err)
			}
		}
	}
}
