package openai

import "strings"

// thinkParser splits a DeepSeek-R1-style reply, "<think>reasoning</think>content", into
// its reasoning and its content as the text streams in. It is a minimal stand-in for
// package inference/reasoning (same shape: newThinkParser(startInThink), Push, Flush)
// until that package lands. A <think> is recognised only at the start of the reply
// (after whitespace); whitespace around the reasoning and at the start of the content
// after </think> is dropped. Text that could be the start of a tag is held back until
// it is decided, so neither stream ever shows part of a tag.
type thinkParser struct {
	state int // stStart, stThink or stContent
	buf   string
	trim  bool // drop whitespace at the start of the current part
}

const (
	stStart   = iota // nothing decided: may still open <think>
	stThink          // inside the reasoning
	stContent        // the answer
)

const (
	openTag  = "<think>"
	closeTag = "</think>"
)

// newThinkParser returns a parser for a reply whose prompt already opened <think>
// (startInThink) or not.
func newThinkParser(startInThink bool) *thinkParser {
	if startInThink {
		return &thinkParser{state: stThink, trim: true}
	}
	return &thinkParser{}
}

// Push adds streamed text and returns the reasoning and content that are decided.
func (p *thinkParser) Push(text string) (reasoning, content string) {
	p.buf += text
	for {
		switch p.state {
		case stStart:
			t := strings.TrimLeft(p.buf, " \t\r\n")
			if strings.HasPrefix(t, openTag) {
				p.buf, p.state, p.trim = t[len(openTag):], stThink, true
				continue
			}
			if strings.HasPrefix(openTag, t) { // "", "<", "<th", ...: undecided
				return reasoning, content
			}
			p.state = stContent
		case stThink:
			if p.trim {
				p.buf = strings.TrimLeft(p.buf, " \t\r\n")
				if p.buf == "" {
					return reasoning, content
				}
				p.trim = false
			}
			if i := strings.Index(p.buf, closeTag); i >= 0 {
				reasoning += strings.TrimRight(p.buf[:i], " \t\r\n")
				p.buf, p.state, p.trim = p.buf[i+len(closeTag):], stContent, true
				continue
			}
			// Hold back a possible partial </think> and the whitespace before it.
			keep := 0
			for n := min(len(closeTag)-1, len(p.buf)); n > 0; n-- {
				if strings.HasSuffix(p.buf, closeTag[:n]) {
					keep = n
					break
				}
			}
			rest := p.buf[:len(p.buf)-keep]
			keep += len(rest) - len(strings.TrimRight(rest, " \t\r\n"))
			reasoning += p.buf[:len(p.buf)-keep]
			p.buf = p.buf[len(p.buf)-keep:]
			return reasoning, content
		case stContent:
			if p.trim {
				p.buf = strings.TrimLeft(p.buf, " \t\r\n")
				if p.buf == "" {
					return reasoning, content
				}
				p.trim = false
			}
			content += p.buf
			p.buf = ""
			return reasoning, content
		}
	}
}

// Flush returns what is held at the end of the reply.
func (p *thinkParser) Flush() (reasoning, content string) {
	buf := p.buf
	p.buf = ""
	switch p.state {
	case stThink:
		return strings.TrimRight(buf, " \t\r\n"), ""
	case stContent:
		if p.trim {
			buf = strings.TrimLeft(buf, " \t\r\n")
		}
	}
	return "", buf
}

// Thinking reports whether the parser is inside the reasoning.
func (p *thinkParser) Thinking() bool { return p.state == stThink }
