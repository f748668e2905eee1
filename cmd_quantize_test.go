package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"ember/inference/gguf"
)

// TestCmdSynthQuantize runs both commands as the user would: synth a tiny model in F32,
// quantize it to Q4_K_M, and check the result; and the usage errors.
func TestCmdSynthQuantize(t *testing.T) {
	dir := t.TempDir()
	f32, q := filepath.Join(dir, "tiny-f32.gguf"), filepath.Join(dir, "tiny-q4_k_m.gguf")
	ctx := context.Background()
	var out, errb bytes.Buffer
	if err := cmdSynth(ctx, []string{f32, "-preset", "tiny", "--ftype", "f32", "-seed", "3"}, &out, &errb); err != nil {
		t.Fatalf("synth: %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "21 tensors") {
		t.Errorf("synth said %q", out.String())
	}
	out.Reset()
	errb.Reset()
	if err := cmdQuantize(ctx, []string{f32, q, "q4_k_m", "-t", "2"}, &out, &errb); err != nil {
		t.Fatalf("quantize: %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "(Q4_K_M): 21 tensors, 16 converted") {
		t.Errorf("quantize said %q", out.String())
	}
	if lines := strings.Count(errb.String(), "\n"); lines != 21 { // a plain line per tensor: stderr is no terminal
		t.Errorf("%d progress lines:\n%s", lines, errb.String())
	}
	f, err := gguf.Open(q)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ft, _ := f.Uint("general.file_type"); ft != 15 {
		t.Errorf("file_type %d", ft)
	}
	for _, tc := range []struct {
		name string
		run  func(context.Context, []string, *bytes.Buffer, *bytes.Buffer) error
		args []string
		want string
	}{
		{"quantize: too few args", quantizeCmd, []string{f32, q}, "usage"},
		{"quantize: bad type", quantizeCmd, []string{f32, q, "Q7_K"}, "unknown type"},
		{"quantize: missing input", quantizeCmd, []string{filepath.Join(dir, "none.gguf"), q, "Q8_0"}, "no such file"},
		{"quantize: bad flag", quantizeCmd, []string{f32, q, "Q8_0", "-x"}, "usage"},
		{"synth: no output", synthCmd, []string{"-preset", "tiny"}, "usage"},
		{"synth: bad preset", synthCmd, []string{q, "-preset", "huge"}, "unknown preset"},
		{"synth: tied and untied", synthCmd, []string{q, "-preset", "tiny", "-tied", "-untied"}, "usage"},
		{"synth: bad ftype", synthCmd, []string{q, "-preset", "tiny", "-ftype", "q7"}, "want one of"},
	} {
		var o, e bytes.Buffer
		err := tc.run(ctx, tc.args, &o, &e)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q (stderr %q)", tc.name, err, tc.want, e.String())
		}
	}
}

func quantizeCmd(ctx context.Context, args []string, o, e *bytes.Buffer) error {
	return cmdQuantize(ctx, args, o, e)
}

func synthCmd(ctx context.Context, args []string, o, e *bytes.Buffer) error {
	return cmdSynth(ctx, args, o, e)
}
