package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestStages: the load's stages go over one another on a terminal's line and leave it
// empty; a file (a log) gets none.
func TestStages(t *testing.T) {
	var b bytes.Buffer
	draw := drawStages(&b)
	draw("starting the GPU")
	draw("loading the weights, 40%")
	draw("")
	want := "\r\x1b[Kember: starting the GPU…\r\x1b[Kember: loading the weights, 40%…\r\x1b[K"
	if b.String() != want {
		t.Errorf("drawn %q, want %q", b.String(), want)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if terminalStages(f) != nil || terminalStages(&b) != nil {
		t.Error("stages for a file")
	}
}
