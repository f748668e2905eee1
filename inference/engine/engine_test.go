package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"ember/inference/backend/ref"
	"ember/inference/sample"
	"ember/inference/synth"
)

const storiesPath = "../../assets/stories260K.gguf"

func newStories(t *testing.T, ctxSize int) *Engine {
	t.Helper()
	return newStoriesOpt(t, Options{ContextSize: ctxSize, PrefillChunk: 7, BlockSize: 4})
}

func collect(t *testing.T, ch <-chan Event) (ids []int32, text string, last Event) {
	t.Helper()
	var sb strings.Builder
	for ev := range ch {
		if !ev.Done {
			ids = append(ids, ev.Token)
		}
		sb.WriteString(ev.Text)
		last = ev
	}
	return ids, sb.String(), last
}

func readIDs(t *testing.T, path string) []int32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int32
	for _, f := range strings.Fields(string(b)) {
		v, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, int32(v))
	}
	return ids
}

// TestStories260KGreedy: 200 greedy tokens from BOS equal llama2.c's reference output,
// token for token and byte for byte.
func TestStories260KGreedy(t *testing.T) {
	e := newStories(t, 256)
	ch, err := e.Generate(context.Background(), Request{Tokens: []int32{1}, MaxTokens: 200, IgnoreEOS: true})
	if err != nil {
		t.Fatal(err)
	}
	ids, text, last := collect(t, ch)
	want := readIDs(t, "../../testdata/models/stories260K.greedy200.ids")
	if len(ids) != len(want) {
		t.Fatalf("%d tokens, want %d", len(ids), len(want))
	}
	for i := range want {
		if ids[i] != want[i] {
			t.Fatalf("token %d: %d, want %d", i, ids[i], want[i])
		}
	}
	wantText, err := os.ReadFile("../../testdata/models/stories260K.greedy200.txt")
	if err != nil {
		t.Fatal(err)
	}
	if text != string(wantText) {
		t.Errorf("text differs:\n got %q\nwant %q", text, wantText)
	}
	if last.Finish != FinishLength || last.Usage.CompletionTokens != 200 || last.Usage.PromptTokens != 1 {
		t.Errorf("final event %+v", last)
	}
}

// TestPrefixReuse: a second request sharing a prefix reuses its KV and gives the same
// tokens as a fresh engine.
func TestPrefixReuse(t *testing.T) {
	ctx := context.Background()
	prompt := "Once upon a time, there was a little dog"
	e := newStories(t, 128)
	ch, err := e.Generate(ctx, Request{Prompt: "Once upon a time, there was a cat", MaxTokens: 5})
	if err != nil {
		t.Fatal(err)
	}
	collect(t, ch)
	ch, err = e.Generate(ctx, Request{Prompt: prompt, MaxTokens: 20})
	if err != nil {
		t.Fatal(err)
	}
	reused, _, last := collect(t, ch)
	if last.Usage.CachedTokens == 0 {
		t.Errorf("no prompt tokens were reused: %+v", last.Usage)
	}
	fresh := newStories(t, 128)
	ch, err = fresh.Generate(ctx, Request{Prompt: prompt, MaxTokens: 20})
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := collect(t, ch)
	if len(want) == 0 || !equal(reused, want) {
		t.Errorf("with reuse %v, fresh %v", reused, want)
	}
}

func equal(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestContextTooLong(t *testing.T) {
	e := newStories(t, 16)
	_, err := e.Generate(context.Background(), Request{Tokens: make([]int32, 16)})
	if !errors.Is(err, ErrContextTooLong) {
		t.Fatalf("err %v, want ErrContextTooLong", err)
	}
	// A completion that runs into the end of the context stops with "length".
	ch, err := e.Generate(context.Background(), Request{Tokens: []int32{1}, IgnoreEOS: true})
	if err != nil {
		t.Fatal(err)
	}
	ids, _, last := collect(t, ch)
	if last.Finish != FinishLength || len(ids) != 16 {
		t.Errorf("finish %q after %d tokens, want length after 16", last.Finish, len(ids))
	}
}

func TestCancel(t *testing.T) {
	e := newStories(t, 256)
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := e.Generate(ctx, Request{Tokens: []int32{1}, IgnoreEOS: true, Sampling: sample.Params{Temperature: 1, Seed: 3}})
	if err != nil {
		t.Fatal(err)
	}
	<-ch
	cancel()
	_, _, last := collect(t, ch)
	if last.Finish != FinishCancelled || !last.Done {
		t.Errorf("final event %+v, want cancelled", last)
	}
	// The engine keeps serving.
	ch, err = e.Generate(context.Background(), Request{Tokens: []int32{1}, MaxTokens: 3})
	if err != nil {
		t.Fatal(err)
	}
	if ids, _, _ := collect(t, ch); len(ids) != 3 {
		t.Errorf("%d tokens after a cancel, want 3", len(ids))
	}
}

func TestSeedReproducible(t *testing.T) {
	e := newStories(t, 128)
	run := func(seed uint64) []int32 {
		ch, err := e.Generate(context.Background(), Request{Tokens: []int32{1}, MaxTokens: 30,
			Sampling: sample.Params{Temperature: 0.9, TopK: 40, TopP: 0.95, Seed: seed}})
		if err != nil {
			t.Fatal(err)
		}
		ids, _, _ := collect(t, ch)
		return ids
	}
	a, b, c := run(7), run(7), run(8)
	if !equal(a, b) {
		t.Errorf("same seed, different tokens: %v vs %v", a, b)
	}
	if equal(a, c) {
		t.Errorf("seeds 7 and 8 gave the same 30 tokens: %v", a)
	}
}

func TestStopAndLogprobs(t *testing.T) {
	e := newStories(t, 256)
	ctx := context.Background()
	ch, err := e.Generate(ctx, Request{Tokens: []int32{1}, MaxTokens: 200})
	if err != nil {
		t.Fatal(err)
	}
	_, full, _ := collect(t, ch)
	// Stop at " park": the text ends right before it, with finish "stop".
	ch, err = e.Generate(ctx, Request{Tokens: []int32{1}, MaxTokens: 200, Stop: []string{" park"}, Logprobs: true, TopLogprobs: 3})
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	var last Event
	n := 0
	for ev := range ch {
		sb.WriteString(ev.Text)
		last = ev
		if ev.Done {
			continue
		}
		n++
		if ev.Logprob == nil || len(ev.Logprob.Top) != 3 || ev.Logprob.Logprob > 0 || ev.Logprob.Top[0].ID != ev.Token {
			t.Fatalf("token %d: logprob %+v (greedy: the top alternative is the token)", ev.Token, ev.Logprob)
		}
	}
	i := strings.Index(full, " park")
	if i < 0 {
		t.Fatalf("reference text has no %q: %q", " park", full)
	}
	if sb.String() != full[:i] || last.Finish != FinishStop {
		t.Errorf("stopped text %q (finish %s), want %q", sb.String(), last.Finish, full[:i])
	}
	if _, err := e.Generate(ctx, Request{Tokens: []int32{1}, TopLogprobs: 21}); err == nil {
		t.Error("top logprobs 21 was accepted")
	}
}

// TestInfillNeedsFIMTokens: a suffix (fill in the middle) on a model whose vocabulary
// has no FIM tokens (stories260K's) is refused with ErrNoInfill, before anything runs.
func TestInfillNeedsFIMTokens(t *testing.T) {
	e := newStories(t, 128)
	if _, err := e.Generate(context.Background(), Request{Prompt: "Once upon", Suffix: " time."}); !errors.Is(err, ErrNoInfill) {
		t.Fatalf("a suffix: %v, want ErrNoInfill", err)
	}
}

// TestInfill: on a model whose vocabulary has FIM tokens (a synthetic one), a suffix
// makes the prompt the tokenizer's infill form (its length is the usage's prompt
// tokens), and the model writes the middle; the same text without the suffix is another
// prompt.
func TestInfill(t *testing.T) {
	p := synth.Presets["tiny"]()
	p.FIM = true
	path := filepath.Join(t.TempDir(), "fim.gguf")
	if _, err := synth.Write(context.Background(), path, p, synth.Options{FileType: "f32", Seed: "fim"}); err != nil {
		t.Fatal(err)
	}
	e := newEngineOn(t, path, ref.New(), Options{ContextSize: 128})
	tok := e.tok
	prefix, suffix := "def add(a, b):\n    return ", "\nprint(add(1, 2))\n"
	want, ok := tok.EncodeInfill(prefix, suffix)
	if !ok {
		t.Fatal("the synthetic vocabulary has no FIM tokens")
	}
	r := generate(t, e, Request{Prompt: prefix, Suffix: suffix, MaxTokens: 8, IgnoreEOS: true})
	if r.last.Err != nil || r.last.Usage.PromptTokens != len(want) || len(r.ids) != 8 {
		t.Fatalf("infill: %d prompt tokens (want %d), %d tokens, %v", r.last.Usage.PromptTokens, len(want), len(r.ids), r.last.Err)
	}
	plain := generate(t, e, Request{Prompt: prefix, MaxTokens: 1})
	if plain.last.Usage.PromptTokens == len(want) {
		t.Errorf("without the suffix the prompt has the infill prompt's %d tokens", len(want))
	}
	if _, err := e.Generate(context.Background(), Request{Tokens: want, Suffix: suffix}); err == nil {
		t.Error("a suffix after a token prompt was taken")
	}
}
