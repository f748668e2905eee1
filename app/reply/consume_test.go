package reply

import (
	"context"
	"errors"
	"testing"

	"ember/inference/engine"
)

// TestConsume: how a generation ended, from its final event and the client's side.
func TestConsume(t *testing.T) {
	done := engine.Event{Text: "b", Done: true, Finish: engine.FinishStop}
	for _, c := range []struct {
		name   string
		evs    []engine.Event
		emit   error
		json   bool
		want   Ended
		pieces string
	}{
		{"finished", []engine.Event{{Text: "a"}, done}, nil, false, Ended{Last: done}, "ab"},
		{"client gone", []engine.Event{{Text: "a"}, done}, errors.New("broken pipe"), false, Ended{Last: done, Gone: true}, "a"},
		{"cancelled by the request", []engine.Event{{Text: "a"}, {Done: true, Finish: engine.FinishCancelled, Err: context.Canceled}}, nil, false,
			Ended{Last: engine.Event{Done: true, Finish: engine.FinishCancelled, Err: context.Canceled}, Gone: true}, "a"},
		{"engine closed", []engine.Event{{Text: "a"}, {Done: true, Finish: engine.FinishCancelled, Err: engine.ErrClosed}}, nil, false,
			Ended{Last: engine.Event{Done: true, Finish: engine.FinishCancelled, Err: engine.ErrClosed}, Closed: true}, "a"},
		{"failed", []engine.Event{{Text: "a"}, {Done: true, Finish: engine.FinishError, Err: errors.New("boom")}}, nil, false,
			Ended{Last: engine.Event{Done: true, Finish: engine.FinishError, Err: errors.New("boom")}, Failed: true}, "a"},
		{"no final event", []engine.Event{{Text: "a"}}, nil, false, Ended{Last: engine.Event{Text: "a"}, Failed: true}, "a"},
		{"JSON closed", []engine.Event{{Text: `{"a":1}`}, {Text: " more"}, done}, nil, true, Ended{Last: done, JSONOver: true}, `{"a":1}`},
	} {
		ch := make(chan engine.Event, len(c.evs))
		for _, ev := range c.evs {
			ch <- ev
		}
		close(ch)
		cancels := 0
		var got string
		end := Consume(ch, func() { cancels++ }, NewShaper(false, false, c.json), func(r, content string, lp *engine.Logprob) error {
			got += content
			return c.emit
		})
		if end.Gone != c.want.Gone || end.Closed != c.want.Closed || end.Failed != c.want.Failed || end.JSONOver != c.want.JSONOver ||
			end.Last.Finish != c.want.Last.Finish || end.Last.Done != c.want.Last.Done {
			t.Errorf("%s: %+v, want %+v", c.name, end, c.want)
		}
		if got != c.pieces {
			t.Errorf("%s: emitted %q, want %q", c.name, got, c.pieces)
		}
		if cancels == 0 {
			t.Errorf("%s: the generation was not cancelled at the end", c.name)
		}
	}
}
