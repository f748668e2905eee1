package server

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/format"

	"ember/inference/engine"
	"ember/inference/gguf"
	"ember/inference/prompt"
	"ember/inference/tokenizer"
)

// Model adapts the app's engine and its model file to the Backend interfaces that
// app/openai and app/ollama declare (it has the methods of both). Its methods are safe
// for concurrent use.
type Model struct {
	eng     *engine.Engine
	tok     *tokenizer.Tokenizer
	name    string
	tmpl    *prompt.Template // nil: the plain-text fallback
	metrics *Metrics         // may be nil

	// Facts about the file, computed once by NewModel.
	size     int64
	digest   string
	details  api.ModelDetails
	info     map[string]any
	loadedAt time.Time
}

// NewModel adapts eng, which runs the model of file f, to the HTTP handlers. name is what
// clients call the model ("model" in requests; /v1/models, /api/tags list it). tmpl is
// the chat template; when nil it is prompt.Detect's pick for the file, except for a base
// model (no template in the file, no chat markers in the vocabulary, like the bundled
// story model), whose conversations render as plain text: the messages' contents joined
// by newlines, for the model to continue. f is read for metadata only and may be closed
// later (its metadata stays valid); it may be nil (no metadata, plain text unless tmpl).
// m receives token counts and latencies; it may be nil.
func NewModel(eng *engine.Engine, name string, f *gguf.File, tmpl *prompt.Template, m *Metrics) *Model {
	md := &Model{eng: eng, tok: eng.Tokenizer(), name: name, tmpl: tmpl, metrics: m, loadedAt: time.Now()}
	m.WatchEngine(eng.Stats)
	if f == nil {
		return md
	}
	if tmpl == nil {
		src, _ := f.String("tokenizer.chat_template")
		if src != "" || hasChatMarkers(md.tok) {
			md.tmpl = prompt.Detect(src, f.Architecture())
		}
	}
	md.size = f.Size()
	md.details, md.info = describe(f)
	md.digest = Fingerprint(f)
	return md
}

// hasChatMarkers reports whether the vocabulary has a chat format's turn markers as
// single tokens (as app.NewChat decides).
func hasChatMarkers(t *tokenizer.Tokenizer) bool {
	for _, marker := range []string{"<|im_start|>", "<|start_header_id|>", "<｜User｜>"} {
		if len(t.Encode(marker, tokenizer.EncodeOptions{ParseSpecial: true})) == 1 {
			return true
		}
	}
	return false
}

// Generate starts a completion on the engine; the events pass through the metrics.
func (m *Model) Generate(ctx context.Context, req engine.Request) (<-chan engine.Event, error) {
	ch, err := m.eng.Generate(ctx, req)
	if err != nil {
		return nil, err
	}
	return m.metrics.Observe(ctx, ch), nil
}

// ModelName is the model's name for clients.
func (m *Model) ModelName() string { return m.name }

// ContextSize is the engine's context in tokens.
func (m *Model) ContextSize() int { return m.eng.ContextSize() }

// TokenText is the text of one token (possibly an incomplete UTF-8 sequence).
func (m *Model) TokenText(id int32) string { return m.tok.Piece(id) }

// Render renders a conversation into prompt text with the chat template. The engine
// adds BOS itself, so a BOS the template writes first is dropped (as llama.cpp does).
func (m *Model) Render(ctx context.Context, msgs []prompt.Message, tools []any, addGenerationPrompt bool) (string, error) {
	if len(tools) > 0 && (m.tmpl == nil || !m.tmpl.UsesTools()) {
		msgs = prompt.WithToolInstructions(msgs, tools)
	}
	if m.tmpl == nil {
		parts := make([]string, 0, len(msgs))
		for _, msg := range msgs {
			if msg.Content != "" {
				parts = append(parts, msg.Content)
			}
		}
		return strings.Join(parts, "\n"), nil
	}
	var bos, eos string
	if id := m.tok.BOS(); id >= 0 {
		bos = m.tok.Piece(id)
	}
	if id := m.tok.EOS(); id >= 0 {
		eos = m.tok.Piece(id)
	}
	out, err := m.tmpl.Render(ctx, msgs, prompt.Options{AddGenerationPrompt: addGenerationPrompt, BOSToken: bos, EOSToken: eos, Tools: tools})
	if err != nil {
		return "", err
	}
	if m.tok.AddBOS() && bos != "" {
		out = strings.TrimPrefix(out, bos)
	}
	return out, nil
}

// Infill reports whether the model's vocabulary has fill-in-the-middle tokens.
func (m *Model) Infill() bool { return m.tok.HasInfill() }

// Template is the chat template's source, "" for the plain fallback.
func (m *Model) Template() string {
	if m.tmpl == nil {
		return ""
	}
	return m.tmpl.Source()
}

// ModelDetails are Ollama's summary of the model (format, family, size, quantization).
func (m *Model) ModelDetails() api.ModelDetails { return m.details }

// ModelInfo is the file's scalar metadata by key (arrays as nil, as Ollama shows them
// without verbose), plus general.parameter_count. Callers must not modify it.
func (m *Model) ModelInfo() map[string]any { return m.info }

// ModelSize is the model file's size in bytes.
func (m *Model) ModelSize() int64 { return m.size }

// ModelDigest is a SHA-256 fingerprint of the file's metadata, tensor layout and the first
// 4 KiB of each tensor (not of the whole file, which would take seconds to hash): it
// tells models apart, but is not the file's sha256 that Ollama shows.
func (m *Model) ModelDigest() string { return m.digest }

// ModifiedAt is when the model was loaded.
func (m *Model) ModifiedAt() time.Time { return m.loadedAt }

// describe summarizes the file as Ollama does.
func describe(f *gguf.File) (api.ModelDetails, map[string]any) {
	arch := f.Architecture()
	var params uint64
	byType := map[string]uint64{}
	for _, t := range f.Tensors {
		params += t.Elements
		if len(t.Dims) >= 2 {
			byType[t.Type.String()] += t.Elements
		}
	}
	quant := ""
	for _, k := range sortedKeys(byType) {
		if quant == "" || byType[k] > byType[quant] {
			quant = k
		}
	}
	d := api.ModelDetails{Format: "gguf", Family: arch, QuantizationLevel: quant, ParameterSize: format.HumanNumber(params)}
	if arch != "" {
		d.Families = []string{arch}
	}
	info := map[string]any{"general.parameter_count": params}
	for _, kv := range f.KVs {
		info[kv.Key] = scalar(kv.Value)
	}
	return d, info
}

func scalar(v gguf.Value) any {
	if s, ok := v.String(); ok {
		return s
	}
	if b, ok := v.Bool(); ok {
		return b
	}
	if v.Type == gguf.TypeFloat32 || v.Type == gguf.TypeFloat64 {
		x, _ := v.Float()
		return x
	}
	switch v.Type {
	case gguf.TypeUint8, gguf.TypeUint16, gguf.TypeUint32, gguf.TypeUint64:
		u, _ := v.Uint()
		return u
	case gguf.TypeInt8, gguf.TypeInt16, gguf.TypeInt32, gguf.TypeInt64:
		i, _ := v.Int()
		return i
	}
	return nil // arrays
}

// fingerprintWindow is the bytes of a tensor's data Fingerprint hashes at each of the
// three places it samples.
const fingerprintWindow = 4096

// Fingerprint identifies a model file by its metadata, tensor layout and a sample of
// its weights: the digest the Ollama routes report, and the key of the persistent
// prefix cache.
func Fingerprint(f *gguf.File) string {
	h := sha256.New()
	var n [8]byte
	for _, kv := range f.KVs {
		if kv.Value.Type == gguf.TypeArray {
			binary.LittleEndian.PutUint64(n[:], uint64(kv.Value.Len()))
			fmt.Fprintf(h, "%s=%s[%x];", kv.Key, kv.Value.TypeName(), n)
			continue
		}
		fmt.Fprintf(h, "%s=%v;", kv.Key, scalar(kv.Value))
	}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		fmt.Fprintf(h, "%s:%s:%v:%d;", t.Name, t.Type, t.Dims, t.Offset)
		// A sample of the weights tells fine-tunes of one base apart: each tensor's
		// first, middle and last fingerprintWindow bytes (all of a small one), so that
		// files differing past a tensor's first rows (a partial fine-tune, an edit) do
		// not share a prefix cache; hashing whole files would read gigabytes a load.
		d := f.TensorData(t)
		if len(d) <= 3*fingerprintWindow {
			h.Write(d)
			continue
		}
		mid := (len(d) - fingerprintWindow) / 2
		h.Write(d[:fingerprintWindow])
		h.Write(d[mid : mid+fingerprintWindow])
		h.Write(d[len(d)-fingerprintWindow:])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
