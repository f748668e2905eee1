package app

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"ember/inference/gguf"
	"ember/inference/quant"
)

// writeGGUF writes a small GGUF model file at path (folders made): arch, a
// context length (0: none), a llama.cpp file type (-1: none) and one F16 tensor.
func writeGGUF(t *testing.T, path, arch string, ctx uint32, ftype int) {
	t.Helper()
	w := gguf.NewWriter()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.AddKV("general.architecture", arch))
	if ctx > 0 {
		must(w.AddKV(arch+".context_length", ctx))
	}
	if ftype >= 0 {
		must(w.AddKV("general.file_type", uint32(ftype)))
	}
	must(w.AddTensor("token_embd.weight", quant.F16, []uint64{8, 4}, make([]byte, 64)))
	must(os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	must(err)
	_, err = w.WriteTo(f)
	must(err)
	must(f.Close())
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func ollamaManifestJSON(digest string) string {
	return fmt.Sprintf(`{"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json",
		"config":{"mediaType":"application/vnd.docker.container.image.v1+json","digest":"sha256:0000","size":10},
		"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"%s","size":100},
		{"mediaType":"application/vnd.ollama.image.template","digest":"sha256:1111","size":10}]}`, digest)
}

func TestDiscoverModels(t *testing.T) {
	home := t.TempDir()
	// Ollama: the official library, a Hugging Face model, and one whose blob is missing.
	ol := filepath.Join(home, ".ollama", "models")
	writeGGUF(t, filepath.Join(ol, "blobs", "sha256-aaaa"), "llama", 131072, 15)
	writeFile(t, filepath.Join(ol, "manifests", "registry.ollama.ai", "library", "llama3.2", "1b"), ollamaManifestJSON("sha256:aaaa"))
	writeGGUF(t, filepath.Join(ol, "blobs", "sha256-bbbb"), "qwen2", 32768, 7)
	writeFile(t, filepath.Join(ol, "manifests", "hf.co", "bartowski", "Qwen2.5-0.5B-GGUF", "Q8_0"), ollamaManifestJSON("sha256:bbbb"))
	writeFile(t, filepath.Join(ol, "manifests", "registry.ollama.ai", "library", "gone", "latest"), ollamaManifestJSON("sha256:cccc"))
	writeFile(t, filepath.Join(ol, "manifests", "registry.ollama.ai", "library", "evil", "latest"), ollamaManifestJSON("sha256:../../x"))

	// LM Studio, both folders; a vision projector and a second split part are left out.
	lm := filepath.Join(home, ".lmstudio", "models", "lmstudio-community", "Qwen2.5-VL-GGUF")
	writeGGUF(t, filepath.Join(lm, "Qwen2.5-VL-3B-Q4_K_M.gguf"), "qwen2vl", 128000, 15)
	writeGGUF(t, filepath.Join(lm, "mmproj-Qwen2.5-VL-3B-f16.gguf"), "clip", 0, 1)
	big := filepath.Join(home, ".cache", "lm-studio", "models", "unsloth", "Big-GGUF")
	writeGGUF(t, filepath.Join(big, "Big-Q2_K-00001-of-00002.gguf"), "deepseek2", 163840, 10)
	writeGGUF(t, filepath.Join(big, "Big-Q2_K-00002-of-00002.gguf"), "deepseek2", 163840, 10)

	// llama.cpp's cache: a model without a file type, a broken file, a non-GGUF file.
	lc := filepath.Join(home, ".cache", "llama.cpp")
	writeGGUF(t, filepath.Join(lc, "ggml-org_gemma-3-1b-it-GGUF_gemma-3-1b-it-Q4_K_M.gguf"), "gemma3", 32768, -1)
	writeFile(t, filepath.Join(lc, "broken.gguf"), "GGUF but not really")
	writeFile(t, filepath.Join(lc, "ggml-org_gemma-3-1b-it-GGUF_gemma-3-1b-it-Q4_K_M.gguf.json"), "{}")

	found, err := DiscoverModels(home)
	var got []string
	for _, m := range found {
		got = append(got, fmt.Sprintf("%s %s %s %s %d", m.Source, m.Name, m.Arch, m.Quant, m.CtxLength))
		if m.Size <= 0 || !filepath.IsAbs(m.Path) {
			t.Errorf("%s: size %d, path %q", m.Name, m.Size, m.Path)
		}
	}
	want := []string{
		"llama.cpp ggml-org_gemma-3-1b-it-GGUF_gemma-3-1b-it-Q4_K_M gemma3 F16 32768",
		"lmstudio Big-Q2_K-00001-of-00002 deepseek2 Q2_K 163840",
		"lmstudio Qwen2.5-VL-3B-Q4_K_M qwen2vl Q4_K_M 128000",
		"ollama hf.co/bartowski/Qwen2.5-0.5B-GGUF:Q8_0 qwen2 Q8_0 32768",
		"ollama llama3.2:1b llama Q4_K_M 131072",
	}
	if !slices.Equal(got, want) {
		t.Errorf("found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if found[4].Path != filepath.Join(ol, "blobs", "sha256-aaaa") {
		t.Errorf("ollama path %s", found[4].Path)
	}
	for _, bad := range []string{"gone:latest", "evil:latest", "broken"} {
		if err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("error %v does not name %s", err, bad)
		}
	}

	// An empty home finds nothing, without error.
	if found, err := DiscoverModels(t.TempDir()); len(found) != 0 || err != nil {
		t.Errorf("empty home: %v, %v", found, err)
	}
}

func TestOllamaName(t *testing.T) {
	for rel, want := range map[string]string{
		"registry.ollama.ai/library/llama3.2/1b": "llama3.2:1b",
		"registry.ollama.ai/jmorgan/mymodel/v2":  "jmorgan/mymodel:v2",
		"hf.co/bartowski/Qwen2.5-0.5B-GGUF/Q8_0": "hf.co/bartowski/Qwen2.5-0.5B-GGUF:Q8_0",
		"example.com:5000/team/model/latest":     "example.com:5000/team/model:latest",
	} {
		if got := ollamaName(rel); got != want {
			t.Errorf("ollamaName(%q) = %q, want %q", rel, got, want)
		}
	}
}
