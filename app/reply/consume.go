package reply

import (
	"context"
	"errors"

	"ember/inference/engine"
)

// Ended is how a generation's events ended (Consume).
type Ended struct {
	Last engine.Event // the final event: its usage, finish reason and error
	// Gone: the client went away (emit failed, or the request's context ended the
	// generation).
	Gone bool
	// JSONOver: the JSON reply closed, so the generation was stopped there; its finish
	// is a stop, whatever the final event says.
	JSONOver bool
	// Closed: the engine ended the generation itself (the model unloaded or the app
	// stopping) while the client still waits, which it must be told.
	Closed bool
	// Failed: the generation failed or its stream ended without a final event.
	Failed bool
}

// Consume reads a generation's events to the end through sh, passing each step's
// reasoning, content and logprob to emit. When emit fails (the client is gone) or the
// JSON reply is over, it cancels the generation and drains the channel for the final
// usage; it calls cancel before it returns.
func Consume(ch <-chan engine.Event, cancel context.CancelFunc, sh *Shaper,
	emit func(reasoning, content string, lp *engine.Logprob) error) Ended {
	defer cancel()
	var (
		end     Ended
		stopped bool // no more output wanted
	)
	for ev := range ch {
		end.Last = ev
		if stopped {
			continue
		}
		r, c, over := sh.Push(ev.Text, ev.Done)
		if over {
			end.JSONOver, stopped = true, true
			cancel()
		}
		if r != "" || c != "" || ev.Logprob != nil {
			if emit(r, c, ev.Logprob) != nil {
				end.Gone, stopped = true, true
				cancel()
			}
		}
	}
	last := end.Last
	switch {
	case end.Gone, end.JSONOver:
	case last.Finish == engine.FinishCancelled && errors.Is(last.Err, engine.ErrClosed):
		end.Closed = true
	case last.Finish == engine.FinishCancelled:
		end.Gone = true
	case last.Finish == engine.FinishError || !last.Done:
		end.Failed = true
	}
	return end
}
