package reply

import (
	"bytes"
	"encoding/json"
	"strings"

	"ember/inference/reasoning"
)

// Shaper turns one generation's text, event by event, into reasoning and content: with
// think, R1's <think>...</think> is split off (startInThink: the prompt already opened
// it); with JSON, the content ends where its first JSON object closes.
type Shaper struct {
	tp       *reasoning.Parser
	jc       *Cut
	jsonText strings.Builder
	jsonOK   bool
	thought  bool // some reasoning came out
	answered bool // some content came out
	// ReasoningTokens counts the tokens that were reasoning: from the first that shows
	// reasoning up to the last before the content starts ("</think>" included).
	ReasoningTokens int
}

// NewShaper returns a Shaper for one generation.
func NewShaper(think, startInThink, jsonMode bool) *Shaper {
	s := &Shaper{jsonOK: true}
	if think {
		s.tp = reasoning.NewParser(startInThink)
	}
	if jsonMode {
		s.jc = &Cut{}
	}
	return s
}

// Push takes one event's text (last: the final event) and returns the reasoning and
// content it adds, and whether the reply is over (its JSON object closed or cannot be
// one): then the caller stops the generation.
func (s *Shaper) Push(text string, last bool) (r, c string, over bool) {
	r, c = "", text
	if s.tp != nil {
		r, c = s.tp.Push(text)
		if last {
			r2, c2 := s.tp.Flush()
			r, c = r+r2, c+c2
		} else {
			s.thought = s.thought || r != ""
			if c != "" {
				s.answered = true
			} else if s.thought && !s.answered {
				s.ReasoningTokens++
			}
		}
	}
	if s.jc != nil && c != "" {
		c, over, s.jsonOK = s.jc.Push(c)
		s.jsonText.WriteString(c)
	}
	return r, c, over
}

// JSONValid reports, in JSON mode, whether the content is one valid JSON object (true
// outside JSON mode).
func (s *Shaper) JSONValid() bool {
	if s.jc == nil {
		return true
	}
	t := bytes.TrimSpace([]byte(s.jsonText.String()))
	return s.jsonOK && len(t) > 0 && t[0] == '{' && json.Valid(t)
}
