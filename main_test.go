package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = runMain(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestLogitsCommand(t *testing.T) {
	model := "testdata/golden/llama-tiny-q8_0.gguf"
	for _, be := range []string{"ref", "cpu"} {
		code, out, errs := runCLI(t, "logits", "-m", model, "-tokens", "1,168,488", "-all", "-greedy", "4", "-backend", be)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", be, code, errs)
		}
		var v struct {
			NVocab int         `json:"n_vocab"`
			Logits [][]float32 `json:"logits"`
			Greedy []int32     `json:"greedy"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%s: output is not JSON: %v", be, err)
		}
		if v.NVocab != 512 || len(v.Logits) != 3 || len(v.Logits[2]) != 512 || len(v.Greedy) != 4 {
			t.Fatalf("%s: n_vocab %d, %d rows, %d greedy", be, v.NVocab, len(v.Logits), len(v.Greedy))
		}
	}
	// Without -all only the last row is printed.
	_, out, _ := runCLI(t, "logits", "-m", model, "-tokens", "1,2,3")
	if n := strings.Count(out, "],["); n != 0 {
		t.Errorf("%d extra rows without -all", n)
	}
}

func TestBadModelFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.gguf")
	if err := os.WriteFile(bad, []byte("GGUF\x03\x00\x00\x00garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"logits", "-m", bad, "-tokens", "1"},
		{"logits", "-m", filepath.Join(dir, "missing.gguf"), "-tokens", "1"},
		{"run", "-m", bad, "-p", "hi"},
		{"logits", "-m", "testdata/golden/llama-tiny-f32.gguf", "-tokens", "1,99999"},
	} {
		code, out, errs := runCLI(t, args...)
		if code == 0 {
			t.Errorf("%v: exit 0", args)
		}
		if out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.HasPrefix(errs, "ember: ") {
			t.Errorf("%v: want one error line, got stdout %q stderr %q", args, out, errs)
		}
	}
}

func TestRunCommandBundledModel(t *testing.T) {
	code, out, errs := runCLI(t, "run", "-p", "Once upon a time", "-n", "30")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.HasPrefix(out, "Once upon a time") || len(out) < 40 {
		t.Errorf("output %q", out)
	}
}

func TestUnknownCommand(t *testing.T) {
	if code, _, _ := runCLI(t, "frobnicate"); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
}
