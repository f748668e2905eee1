package ollama

import (
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"ember/app/enginetest"
	"ember/inference/engine"
)

const storiesPath = "../../assets/stories260K.gguf"

// testBackend is the real engine on stories260K (see enginetest).
type testBackend struct{ *enginetest.Backend }

func newTestBackend(t testing.TB) *testBackend {
	t.Helper()
	return &testBackend{enginetest.New(t, storiesPath, engine.Options{ContextSize: 256})}
}

func (b *testBackend) Template() string {
	if b.Tmpl == nil {
		return ""
	}
	return b.Tmpl.Source()
}

func (b *testBackend) ModelDetails() api.ModelDetails {
	return api.ModelDetails{Format: "gguf", Family: "llama", Families: []string{"llama"}, ParameterSize: "292K", QuantizationLevel: "F32"}
}

func (b *testBackend) ModelInfo() map[string]any {
	return map[string]any{"general.architecture": "llama", "llama.context_length": 2048}
}

func (b *testBackend) ModelSize() int64      { return 1185376 }
func (b *testBackend) ModelDigest() string   { return "sha256:0123" }
func (b *testBackend) ModifiedAt() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
