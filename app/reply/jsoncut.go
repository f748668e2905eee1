// Package reply shapes a generation's streamed text into what the API routes send:
// DeepSeek-R1 reasoning split from the content, and the JSON modes of the OpenAI
// (response_format json_object) and Ollama ("format": "json") routes, which end the
// reply where its first top-level JSON object closes.
package reply

// Cut watches a streamed reply for a JSON object: it ends the reply where the first
// top-level JSON object closes, and gives up as soon as the reply starts with anything
// but '{'. The engine's sampling already keeps a JSON request's reply an object's prefix
// (engine.Request.JSON); Cut is the routes' own check of what they send, and the
// complete reply is then checked with json.Valid by the caller.
type Cut struct {
	started bool // the opening '{' was seen
	depth   int  // nesting of objects and arrays
	inStr   bool
	esc     bool
}

// Push returns the prefix of text that belongs to the reply, and whether the reply is
// over: the object closed (ok) or cannot be a JSON object (!ok).
func (j *Cut) Push(text string) (keep string, over, ok bool) {
	for i := 0; i < len(text); i++ {
		c := text[i]
		if !j.started {
			switch c {
			case ' ', '\t', '\r', '\n':
				continue
			case '{':
				j.started, j.depth = true, 1
				continue
			}
			return text[:i+1], true, false
		}
		switch {
		case j.inStr:
			switch {
			case j.esc:
				j.esc = false
			case c == '\\':
				j.esc = true
			case c == '"':
				j.inStr = false
			}
		case c == '"':
			j.inStr = true
		case c == '{' || c == '[':
			j.depth++
		case c == '}' || c == ']':
			j.depth--
			if j.depth == 0 {
				return text[:i+1], true, true
			}
		}
	}
	return text, false, true
}
