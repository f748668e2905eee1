package openai

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPrediction: a predicted output (the reply given before, as a string or as text
// parts) leaves the reply as it is, and the usage tells how many of its tokens held;
// without one there are no such counts.
func TestPrediction(t *testing.T) {
	h := New(newTestBackend(t), Options{})
	params := `,"temperature":0,"max_tokens":40`
	var plain chatCompletion
	postJSON(t, h, "/v1/chat/completions", chatBody(params), &plain)
	want := plain.Choices[0].Message.text()
	if d := plain.Usage.CompletionTokensDetails; d != nil && d.AcceptedPredictionTokens+d.RejectedPredictionTokens > 0 {
		t.Errorf("no prediction, yet %+v", d)
	}
	quoted, _ := json.Marshal(want)
	for _, pred := range []string{
		`{"type":"content","content":` + string(quoted) + `}`,
		`{"type":"content","content":[{"type":"text","text":` + string(quoted) + `}]}`,
	} {
		var r chatCompletion
		postJSON(t, h, "/v1/chat/completions", chatBody(params+`,"prediction":`+pred), &r)
		if got := r.Choices[0].Message.text(); got != want {
			t.Fatalf("with the prediction %s: %q, want %q", pred, got, want)
		}
		d := r.Usage.CompletionTokensDetails
		if d == nil || d.AcceptedPredictionTokens == 0 || d.AcceptedPredictionTokens+d.RejectedPredictionTokens > r.Usage.CompletionTokens+8 {
			t.Errorf("with the prediction: usage details %+v of %d tokens", d, r.Usage.CompletionTokens)
		}
	}
	raw := post2(t, h, chatBody(params+`,"prediction":{"type":"content","content":"Once upon a time"}`))
	if !strings.Contains(raw, `"accepted_prediction_tokens":`) || !strings.Contains(raw, `"rejected_prediction_tokens":`) {
		t.Errorf("usage lacks the prediction counts: %s", raw)
	}
}

// TestLogitBias: +100 on a token makes the reply that token over and over; keys that are
// not token ids and biases outside -100..100 are 400s naming logit_bias.
func TestLogitBias(t *testing.T) {
	b := newTestBackend(t)
	h := New(b, Options{})
	var r chatCompletion
	postJSON(t, h, "/v1/chat/completions", chatBody(`,"max_tokens":5,"logit_bias":{"300":100}`), &r)
	if want := strings.Repeat(b.TokenText(300), 5); r.Choices[0].Message.text() != strings.TrimLeft(want, " ") && r.Choices[0].Message.text() != want {
		t.Errorf("biased reply %q, want %q", r.Choices[0].Message.text(), want)
	}
	for _, bias := range []string{`{"x":1}`, `{"-3":1}`, `{"5":101}`, `{"5":-1000}`} {
		code, body := post(t, h, "/v1/chat/completions", chatBody(`,"max_tokens":2,"logit_bias":`+bias))
		if code != 400 || !strings.Contains(string(body), `"param":"logit_bias"`) {
			t.Errorf("logit_bias %s: %d %s", bias, code, body)
		}
	}
}

// TestJSONSchema: a json_schema reply follows the schema while it is written: the keys
// are the schema's; one that completes decodes into it, one that does not is a
// json_validate_failed.
func TestJSONSchema(t *testing.T) {
	h := New(newTestBackend(t), Options{})
	rf := `,"response_format":{"type":"json_schema","json_schema":{"name":"p","strict":true,"schema":{"type":"object",` +
		`"properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name","age"],"additionalProperties":false}}}`
	code, body := post(t, h, "/v1/chat/completions", chatBody(`,"max_tokens":150,"temperature":0`+rf))
	switch {
	case code == 200:
		var r chatCompletion
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatal(err)
		}
		var got struct {
			Name *string
			Age  *int
		}
		if err := json.Unmarshal([]byte(r.Choices[0].Message.text()), &got); err != nil || got.Name == nil || got.Age == nil {
			t.Fatalf("reply %q: %v", r.Choices[0].Message.text(), err)
		}
	case code == 400 && strings.Contains(string(body), "json_validate_failed"):
	default:
		t.Fatalf("%d %s", code, body)
	}
	t.Logf("%d %s", code, body)
}
