package engine

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"ember/inference/jsonprefix"
	"ember/inference/sample"
)

// TestJSONReply: a JSON request's reply is, at every token, a prefix of one JSON object,
// and a whole, valid object when it ends by itself (the object closed), greedy and
// sampled, with prompt lookup too; the same prompt without JSON is no JSON at all (so the
// constraint did the work). With ThinkFirst the text before "</think>" is free.
func TestJSONReply(t *testing.T) {
	e := newStoriesOpt(t, Options{ContextSize: 256, PrefillChunk: 64, BlockSize: 4, Parallel: 3, Lookup: 3, checkIntegrity: true})
	free := generate(t, e, Request{Prompt: prompts[0], MaxTokens: 30})
	if s := strings.TrimSpace(e.tok.Decode(free.ids)); strings.HasPrefix(s, "{") {
		t.Fatalf("stories260K wrote JSON by itself (%q): the test proves little", s)
	}
	for i, r := range []Request{
		{Prompt: prompts[0], MaxTokens: 120, JSON: true},
		{Prompt: prompts[1], MaxTokens: 120, JSON: true, Sampling: sample.Params{Temperature: 0.9, Seed: 4}},
		{Prompt: prompts[3], MaxTokens: 120, JSON: true, Sampling: sample.Params{Temperature: 1.2, TopK: 20, Seed: 5, Penalties: sample.Penalties{Repeat: 1.1}}},
		{Prompt: "Tell me about the dog <think>", MaxTokens: 160, JSON: true, ThinkFirst: true, IgnoreEOS: true},
	} {
		what := fmt.Sprintf("request %d", i)
		ch, err := e.Generate(t.Context(), r)
		if err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		var last Event
		for ev := range ch {
			text.WriteString(ev.Text)
			last = ev
		}
		reply := text.String()
		if r.ThinkFirst {
			k := strings.Index(reply, "</think>")
			if k < 0 {
				t.Logf("%s: the reasoning never closed in %d tokens: %q", what, r.MaxTokens, reply)
				continue
			}
			reply = reply[k+len("</think>"):]
		}
		if !strings.Contains(reply, "{") {
			t.Fatalf("%s: %q never opened the object (at most %d whitespace bytes may come first)", what, reply, jsonprefix.MaxSpace)
		}
		var c jsonprefix.Checker
		if !c.Feed(reply) {
			t.Fatalf("%s: %q is no prefix of a JSON object", what, reply)
		}
		if last.Finish == FinishStop && (!c.Done() || !json.Valid([]byte(reply))) {
			t.Fatalf("%s: ended by itself with %q, not a whole object", what, reply)
		}
		t.Logf("%s (%s after %d tokens): %q", what, last.Finish, last.Usage.CompletionTokens, reply)
	}
}

// TestJSONReplyThinkFirst: with a reasoning section first, everything is allowed until
// "</think>" has been written (split over tokens too), then only what keeps the rest an
// object's prefix ('{' is refused right after a value; '}' closes the object).
func TestJSONReplyThinkFirst(t *testing.T) {
	e := newStories(t, 64)
	j := newJSONReply(e.tok, true, nil)
	brace := int32(-1)
	for id := int32(0); id < int32(e.tok.VocabSize()); id++ {
		if e.tok.Piece(id) == "{" {
			brace = id
		}
	}
	if brace < 0 {
		t.Skip("no '{' token")
	}
	for _, piece := range []string{"Let me think. ", "Done </th", "ink"} {
		if !j.active() && j.push(piece) {
			t.Fatalf("the object closed in the reasoning")
		}
	}
	if j.active() {
		t.Fatal("the constraint started before </think> was whole")
	}
	if j.push(">\n{\"a\": 1") || !j.active() {
		t.Fatal("after </think>: not active, or already closed")
	}
	if j.allowed(brace) {
		t.Error("'{' allowed right after a value")
	}
	if !j.push("}") {
		t.Error("'}' did not close the object")
	}
}

// TestJSONReplyDeadEnd: a piece that does not continue the object (what the masked draw
// returns when no token is allowed) ends the reply, which stays incomplete.
func TestJSONReplyDeadEnd(t *testing.T) {
	e := newStories(t, 64)
	j := newJSONReply(e.tok, false, nil)
	if j.push(`{"a"`) {
		t.Fatal("over after a valid prefix")
	}
	if !j.push(`x`) || j.c.Done() {
		t.Error("a piece off the object did not end the reply, or the object counts as whole")
	}
}

// TestLogitBias: -100 on the greedy token makes another one come first, +100 on a token
// makes every token that one (greedy and sampled), and a bias outside the vocabulary is
// refused.
func TestLogitBias(t *testing.T) {
	e := newStoriesOpt(t, Options{ContextSize: 128, Lookup: 3})
	plain := generate(t, e, Request{Prompt: prompts[0], MaxTokens: 4})
	first := plain.ids[0]
	banned := generate(t, e, Request{Prompt: prompts[0], MaxTokens: 4, LogitBias: map[int32]float32{first: -100}})
	if banned.ids[0] == first {
		t.Fatalf("token %d came first with a bias of -100", first)
	}
	const forced = 300
	for _, sp := range []sample.Params{{}, {Temperature: 1, Seed: 2}} {
		r := generate(t, e, Request{Prompt: prompts[1], MaxTokens: 6, IgnoreEOS: true, Sampling: sp,
			LogitBias: map[int32]float32{forced: 100}})
		for i, id := range r.ids {
			if id != forced {
				t.Fatalf("sampling %+v: token %d is %d, want %d (biased by 100)", sp, i, id, forced)
			}
		}
	}
	if _, err := e.Generate(t.Context(), Request{Prompt: "a", LogitBias: map[int32]float32{1 << 20: 1}}); err == nil {
		t.Error("a bias of a token outside the vocabulary was taken")
	}
}

// TestJSONSchemaReply: with a schema the reply's keys are the schema's, in any order,
// each value of its type; a reply that ends by itself decodes into the schema's shape.
func TestJSONSchemaReply(t *testing.T) {
	var v any
	if err := json.Unmarshal([]byte(`{"type":"object","additionalProperties":false,"required":["name","age"],
		"properties":{"name":{"type":"string"},"age":{"type":"integer"},"mood":{"type":"string","enum":["happy","sad"]}}}`), &v); err != nil {
		t.Fatal(err)
	}
	schema, err := jsonprefix.Compile(v)
	if err != nil {
		t.Fatal(err)
	}
	e := newStoriesOpt(t, Options{ContextSize: 256, Parallel: 2})
	for i, sp := range []sample.Params{{}, {Temperature: 0.8, Seed: 9}} {
		r := generate(t, e, Request{Prompt: prompts[i], MaxTokens: 150, JSON: true, JSONSchema: schema, Sampling: sp})
		reply := e.tok.Decode(r.ids)
		c := jsonprefix.NewChecker(schema)
		if !c.Feed(reply) {
			t.Fatalf("sampling %+v: %q does not follow the schema", sp, reply)
		}
		if !strings.Contains(reply, `"`) {
			t.Fatalf("sampling %+v: %q has no key", sp, reply)
		}
		if r.last.Finish == FinishStop {
			var got struct {
				Name *string
				Age  *int
				Mood *string
			}
			if err := json.Unmarshal([]byte(reply), &got); err != nil || got.Name == nil || got.Age == nil {
				t.Fatalf("sampling %+v: %q: %v", sp, reply, err)
			}
		}
		t.Logf("sampling %+v (%s): %q", sp, r.last.Finish, reply)
	}
}
