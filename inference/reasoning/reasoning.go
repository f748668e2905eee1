// Package reasoning splits the streamed output of a DeepSeek-R1 style model into its
// reasoning, written between <think> and </think>, and its answer (the content), as the
// R1 chat front-ends do.
//
// Rules, for the whole stream:
//   - "<think>" opens the reasoning only as the very first bytes of the output; anywhere
//     else, and always after "</think>", the tags are plain text;
//   - without that opening tag the output is all content, unless the parser starts in
//     the reasoning because the prompt already ended with "<think>\n" (R1 and its
//     distills' generation prompt), in which case a repeated "<think>" is dropped too;
//   - the first "</think>" ends the reasoning; the newlines that follow it are dropped;
//   - an unterminated reasoning stays reasoning.
//
// Push holds back the bytes that could be the start of a tag it is waiting for, so no
// piece of a tag is ever returned; the tags are ASCII, so a UTF-8 sequence that arrives
// whole leaves whole. The concatenation of everything returned equals the output minus
// the tags and the newlines after "</think>".
package reasoning

import "strings"

const (
	openTag  = "<think>"
	closeTag = "</think>"
)

type state uint8

const (
	atStart      state = iota // nothing decided: the output may open with <think>
	atStartThink              // in the reasoning already; a leading <think> is dropped
	inThink                   // reasoning, until </think>
	inContent                 // the answer; tags are text
)

// Parser splits one stream. It is not safe for concurrent use.
type Parser struct {
	state state
	held  string // bytes that may start the tag the parser is waiting for
	trim  bool   // drop newlines: the content has just followed </think>
}

// NewParser returns a parser for one stream. startInThink says the prompt already opened
// the reasoning (it ends with "<think>\n"), so the model writes only "...</think>answer".
func NewParser(startInThink bool) *Parser {
	if startInThink {
		return &Parser{state: atStartThink}
	}
	return &Parser{state: atStart}
}

// Push splits the next piece of the stream. It returns the reasoning and content that
// are certain; anything that may still turn out to be a tag is held for the next Push or
// for Flush.
func (p *Parser) Push(text string) (reasoning, content string) {
	var r, c strings.Builder
	buf := p.held + text
	p.held = ""
	for buf != "" {
		switch p.state {
		case atStart, atStartThink:
			switch {
			case strings.HasPrefix(buf, openTag):
				buf = buf[len(openTag):]
				p.state = inThink
			case strings.HasPrefix(openTag, buf): // too short to tell
				p.held, buf = buf, ""
			case p.state == atStart:
				p.state = inContent
			default:
				p.state = inThink
			}
		case inThink:
			if i := strings.Index(buf, closeTag); i >= 0 {
				r.WriteString(buf[:i])
				buf = buf[i+len(closeTag):]
				p.state, p.trim = inContent, true
				continue
			}
			k := tagPrefixSuffix(buf, closeTag)
			r.WriteString(buf[:len(buf)-k])
			p.held, buf = buf[len(buf)-k:], ""
		case inContent:
			if p.trim {
				if buf = strings.TrimLeft(buf, "\r\n"); buf == "" {
					break
				}
				p.trim = false
			}
			c.WriteString(buf)
			buf = ""
		}
	}
	return r.String(), c.String()
}

// Flush ends the stream: it returns what Push held back, as the text it turned out to
// be (a lone "</thi" at the end is reasoning, a lone "<thi" is content).
func (p *Parser) Flush() (reasoning, content string) {
	held := p.held
	p.held = ""
	switch p.state {
	case atStart:
		p.state = inContent
		return "", held
	case atStartThink:
		p.state = inThink
	}
	if p.state == inThink {
		return held, ""
	}
	return "", held
}

// tagPrefixSuffix is the length of the longest suffix of s that is a proper prefix of
// tag: the bytes to hold back because the tag may continue in the next piece.
func tagPrefixSuffix(s, tag string) int {
	for k := min(len(s), len(tag)-1); k > 0; k-- {
		if strings.HasSuffix(s, tag[:k]) {
			return k
		}
	}
	return 0
}
