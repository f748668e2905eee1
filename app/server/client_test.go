package server_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"ember/app/server"
	"ember/inference/tokenizer"
)

// nodeClient returns the path of a client script in build/npm, skipping the test when
// Node or the npm packages are missing unless EMBER_REQUIRE_CLIENTS is set (make test
// sets it, after build/deps.sh --test installed them).
func nodeClient(t *testing.T, script string) string {
	t.Helper()
	dir, err := filepath.Abs("../../build/npm")
	if err != nil {
		t.Fatal(err)
	}
	_, errNode := exec.LookPath("node")
	_, errMod := os.Stat(filepath.Join(dir, "node_modules", "openai", "package.json"))
	if errNode != nil || errMod != nil {
		if os.Getenv("EMBER_REQUIRE_CLIENTS") != "" {
			t.Fatalf("node (%v) or the npm clients (%v) are missing: run build/deps.sh --test", errNode, errMod)
		}
		t.Skipf("node (%v) or the npm clients (%v) are missing: run build/deps.sh --test", errNode, errMod)
	}
	return filepath.Join(dir, script)
}

// TestOpenAINodeClient: the official openai npm client, streaming and not, against the
// running server.
func TestOpenAINodeClient(t *testing.T) {
	script := nodeClient(t, "openai_client.mjs")
	_, ts := newServer(t, server.Config{})
	cmd := exec.Command("node", script, ts.URL+"/v1", "stories260K")
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("node client: %v\n%s", err, stderr)
	}
	type usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	}
	var r struct {
		Chat struct {
			Object, Content, Finish string
			Usage                   usage
		}
		Stream struct {
			Content string
			Chunks  int
			Finish  string
			Usage   *usage
		}
		Logprobs   struct{ Choices, Tokens, Top int }
		Completion struct {
			Object, Text string
			Usage        usage
		}
		Models       []string
		Error        struct{ Status int }
		UnknownModel struct{ Status int }
	}
	t.Logf("client saw: %s", out)
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	nPrompt := len(newEngine(t).Tokenizer().Encode("Once upon a time", tokenizer.EncodeOptions{AddSpecial: true}))
	if r.Chat.Object != "chat.completion" || r.Chat.Content == "" || r.Chat.Finish != "length" || r.Chat.Usage.CompletionTokens != 12 {
		t.Errorf("chat: %+v", r.Chat)
	}
	if r.Stream.Content != r.Chat.Content || r.Stream.Chunks < 3 || r.Stream.Finish != "length" ||
		r.Stream.Usage == nil || r.Stream.Usage.CompletionTokens != 12 || r.Stream.Usage.TotalTokens != r.Stream.Usage.PromptTokens+12 {
		t.Errorf("stream: %+v (non-streamed content %q)", r.Stream, r.Chat.Content)
	}
	if r.Logprobs.Choices != 2 || r.Logprobs.Tokens != 4 || r.Logprobs.Top != 2 {
		t.Errorf("logprobs: %+v", r.Logprobs)
	}
	if r.Completion.Object != "text_completion" || r.Completion.Text == "" || r.Completion.Usage.PromptTokens != nPrompt {
		t.Errorf("completion: %+v (want %d prompt tokens)", r.Completion, nPrompt)
	}
	if len(r.Models) != 1 || r.Models[0] != "stories260K" {
		t.Errorf("models: %v", r.Models)
	}
	if r.Error.Status != 400 || r.UnknownModel.Status == 200 {
		t.Errorf("errors: n=9 gave %d, an unknown model %d", r.Error.Status, r.UnknownModel.Status)
	}
}
