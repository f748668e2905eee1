package server_test

import (
	"context"
	"testing"

	"ember/app/server"
	"ember/inference/prompt"
)

// TestModelRender: a file without a chat template renders contents joined by newlines;
// a template's leading BOS is dropped because the engine adds one.
func TestModelRender(t *testing.T) {
	md := newModel(t, nil)
	msgs := []prompt.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Once upon a time"}}
	got, err := md.Render(context.Background(), msgs, nil, true)
	if err != nil || got != "Be brief.\nOnce upon a time" {
		t.Fatalf("%q %v", got, err)
	}
	if md.Template() != "" || md.ContextSize() != 256 || md.ModelName() != "stories260K" || md.TokenText(1) != "<s>" {
		t.Errorf("template %q, context %d, name %q, token 1 %q", md.Template(), md.ContextSize(), md.ModelName(), md.TokenText(1))
	}
	d := md.ModelDetails()
	if d.Family != "llama" || d.Format != "gguf" || d.QuantizationLevel != "F32" || d.ParameterSize == "" || md.ModelSize() == 0 {
		t.Errorf("details %+v size %d", d, md.ModelSize())
	}
	if md.ModelInfo()["llama.context_length"] != uint64(2048) || md.ModelInfo()["tokenizer.ggml.tokens"] != nil {
		t.Errorf("info %v", md.ModelInfo())
	}

	tmpl, err := prompt.Parse("{{ bos_token }}{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}")
	if err != nil {
		t.Fatal(err)
	}
	tm := server.NewModel(newEngine(t), "x", nil, tmpl, nil)
	got, err = tm.Render(context.Background(), msgs, nil, true)
	if want := "<|system|>Be brief.<|user|>Once upon a time<|assistant|>"; err != nil || got != want {
		t.Fatalf("%q %v, want %q", got, err, want)
	}
}
