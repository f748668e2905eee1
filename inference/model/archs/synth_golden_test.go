package archs

import (
	"testing"

	"ember/inference/model/goldentest"
)

// goldenGGUF is the path of golden model name's GGUF (see goldentest.GGUF).
func goldenGGUF(t testing.TB, name string) string { return goldentest.GGUF(t, goldenDir, name) }
