//go:build !nogui

package ui

import (
	"net/url"
	"regexp"
	"strings"

	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// markdownSegments renders the Markdown that models write into RichText
// segments. It is a small, forgiving subset made for text that streams in:
// paragraphs (single newlines kept), # headings, fenced code (an open fence
// runs to the end, as while streaming), lists, > quotes, --- rules, |tables|
// (shown monospaced), and inline **strong**, *emphasis*, `code`, [links](url)
// and \escapes. Anything it does not recognise, including an unclosed marker,
// stays literal text.
//
// (Fyne's own RichText.ParseMarkdown inserts a space wherever goldmark splits
// a text node, so "Hi! I am" reads "Hi ! I am"; hence this.)
func markdownSegments(src string) []widget.RichTextSegment {
	p := mdParser{lines: strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")}
	p.parse()
	return p.out
}

var (
	mdFence   = regexp.MustCompile("^\\s{0,3}(```+|~~~+)")
	mdHeading = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	mdRule    = regexp.MustCompile(`^\s{0,3}(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,})$`)
	mdItem    = regexp.MustCompile(`^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$`)
	mdQuote   = regexp.MustCompile(`^\s{0,3}>\s?(.*)$`)
)

// blockGap is the empty row between blocks: half a line, not a whole one.
var blockGap = widget.RichTextStyle{Inline: false, SizeName: theme.SizeNameCaptionText}

type mdParser struct {
	lines []string
	i     int // the next line
	out   []widget.RichTextSegment
	para  []string // lines of the paragraph being gathered
}

func (p *mdParser) parse() {
	for p.i < len(p.lines) {
		line := p.lines[p.i]
		switch {
		case strings.TrimSpace(line) == "":
			p.flushPara()
			p.i++
		case mdFence.MatchString(line):
			p.flushPara()
			p.code(mdFence.FindStringSubmatch(line)[1])
		case mdHeading.MatchString(line):
			p.flushPara()
			m := mdHeading.FindStringSubmatch(line)
			style := widget.RichTextStyleSubHeading
			if len(m[1]) > 2 {
				style = widget.RichTextStyleParagraph
				style.TextStyle.Bold = true
			}
			p.block(&widget.TextSegment{Style: style, Text: plainInline(m[2])})
			p.i++
		case mdRule.MatchString(line):
			p.flushPara()
			p.block(&widget.SeparatorSegment{})
			p.i++
		case mdItem.MatchString(line):
			p.flushPara()
			p.list()
		case mdQuote.MatchString(line):
			p.flushPara()
			p.quote()
		case strings.HasPrefix(strings.TrimSpace(line), "|"):
			p.flushPara()
			p.table()
		default:
			p.para = append(p.para, strings.TrimSpace(line))
			p.i++
		}
	}
	p.flushPara()
}

// block starts a block: a gap after the one before, then segs.
func (p *mdParser) block(segs ...widget.RichTextSegment) {
	if len(p.out) > 0 {
		p.out = append(p.out, &widget.TextSegment{Style: blockGap})
	}
	p.out = append(p.out, segs...)
}

func (p *mdParser) flushPara() {
	if len(p.para) == 0 {
		return
	}
	p.block(paragraph(inlineSegments(strings.Join(p.para, "\n")))...)
	p.para = p.para[:0]
}

// code is a fenced block; without its closing fence it runs to the end.
func (p *mdParser) code(fence string) {
	var body []string
	for p.i++; p.i < len(p.lines); p.i++ {
		if t := strings.TrimSpace(p.lines[p.i]); strings.HasPrefix(t, fence[:3]) && strings.Trim(t, fence[:1]) == "" {
			p.i++
			break
		}
		body = append(body, p.lines[p.i])
	}
	if len(body) > 0 {
		p.block(&widget.TextSegment{Style: widget.RichTextStyleCodeBlock, Text: strings.Join(body, "\n")})
	}
}

// list renders items as paragraphs behind their marker (the model's own
// numbers), nested items indented; blank lines between items are allowed.
func (p *mdParser) list() {
	first := true
	for p.i < len(p.lines) {
		m := mdItem.FindStringSubmatch(p.lines[p.i])
		if m == nil {
			break
		}
		indent := strings.Repeat("    ", min(len(strings.ReplaceAll(m[1], "\t", "    "))/2, 6))
		marker := "•"
		if c := m[2][0]; c >= '0' && c <= '9' {
			marker = m[2][:len(m[2])-1] + "."
		}
		text := []string{m[3]}
		// Continuation lines: indented, not an item, not blank.
		for p.i++; p.i < len(p.lines); p.i++ {
			l := p.lines[p.i]
			if strings.TrimSpace(l) == "" || mdItem.MatchString(l) || !strings.HasPrefix(l, "  ") {
				break
			}
			text = append(text, strings.TrimSpace(l))
		}
		segs := append([]widget.RichTextSegment{&widget.TextSegment{
			Style: widget.RichTextStyleInline, Text: indent + marker + "  ",
		}}, inlineSegments(strings.Join(text, "\n"))...)
		if first {
			p.block(paragraph(segs)...)
			first = false
		} else {
			p.out = append(p.out, paragraph(segs)...)
		}
		// A blank line continues the list only if an item follows.
		j := p.i
		for j < len(p.lines) && strings.TrimSpace(p.lines[j]) == "" {
			j++
		}
		if j < len(p.lines) && j > p.i && mdItem.MatchString(p.lines[j]) {
			p.i = j
		}
	}
}

func (p *mdParser) quote() {
	var body []string
	for ; p.i < len(p.lines); p.i++ {
		m := mdQuote.FindStringSubmatch(p.lines[p.i])
		if m == nil {
			break
		}
		body = append(body, m[1])
	}
	p.block(&widget.TextSegment{Style: widget.RichTextStyleBlockquote, Text: strings.Join(body, "\n")})
}

// table shows |-rows monospaced, as written, so columns line up.
func (p *mdParser) table() {
	var body []string
	for ; p.i < len(p.lines) && strings.HasPrefix(strings.TrimSpace(p.lines[p.i]), "|"); p.i++ {
		body = append(body, strings.TrimSpace(p.lines[p.i]))
	}
	p.block(&widget.TextSegment{Style: widget.RichTextStyleCodeBlock, Text: strings.Join(body, "\n")})
}

// paragraph ends a run of inline segments with an empty block segment, which
// closes the row without adding one.
func paragraph(segs []widget.RichTextSegment) []widget.RichTextSegment {
	return append(segs, &widget.TextSegment{Style: widget.RichTextStyleParagraph})
}

// inlineSegments renders **strong**, *emphasis*, ***both***, `code`,
// [text](http...) and \escapes; the rest is plain text.
func inlineSegments(s string) []widget.RichTextSegment {
	var out []widget.RichTextSegment
	var plain strings.Builder
	emit := func(seg widget.RichTextSegment) {
		if plain.Len() > 0 {
			out = append(out, &widget.TextSegment{Style: widget.RichTextStyleInline, Text: plain.String()})
			plain.Reset()
		}
		out = append(out, seg)
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]):
			plain.WriteByte(s[i+1])
			i += 2
			continue
		case c == '`':
			n := runLen(s, i, '`')
			if end := strings.Index(s[i+n:], s[i:i+n]); end >= 0 && runLen(s, i+n+end, '`') == n {
				code := s[i+n : i+n+end]
				if t := strings.TrimSpace(code); t != "" {
					emit(&widget.TextSegment{Style: widget.RichTextStyleCodeInline, Text: code})
					i += 2*n + end
					continue
				}
			}
			plain.WriteString(s[i : i+n])
			i += n
			continue
		case c == '*' || c == '_':
			if seg, next := emphasis(s, i); seg != nil {
				emit(seg)
				i = next
				continue
			}
			n := runLen(s, i, c)
			plain.WriteString(s[i : i+n])
			i += n
			continue
		case c == '[':
			if seg, next := link(s, i); seg != nil {
				emit(seg)
				i = next
				continue
			}
		}
		plain.WriteByte(c)
		i++
	}
	if plain.Len() > 0 {
		out = append(out, &widget.TextSegment{Style: widget.RichTextStyleInline, Text: plain.String()})
	}
	return out
}

// emphasis parses a *, ** or *** span (or _) at s[i]; nil if there is none.
// The opener must be followed and the closer preceded by a non-space, and
// an _ span must not touch letters outside (snake_case stays as it is).
func emphasis(s string, i int) (*widget.TextSegment, int) {
	c := s[i]
	n := min(runLen(s, i, c), 3)
	if i+n >= len(s) || s[i+n] == ' ' || s[i+n] == '\n' || (c == '_' && i > 0 && isWordByte(s[i-1])) {
		return nil, 0
	}
	marker := s[i : i+n]
	for from := i + n; ; {
		k := strings.Index(s[from:], marker)
		if k < 0 {
			return nil, 0
		}
		end := from + k
		after := end + n
		if end > i+n && s[end-1] != ' ' && s[end-1] != '\n' && runLen(s, end, c) == n &&
			!(c == '_' && after < len(s) && isWordByte(s[after])) {
			style := widget.RichTextStyleEmphasis
			switch n {
			case 2:
				style = widget.RichTextStyleStrong
			case 3:
				style = widget.RichTextStyleStrong
				style.TextStyle.Italic = true
			}
			return &widget.TextSegment{Style: style, Text: plainInline(s[i+n : end])}, after
		}
		from = end + runLen(s, end, c)
	}
}

// link parses [text](http(s)://...) at s[i]; nil if there is none.
func link(s string, i int) (*widget.HyperlinkSegment, int) {
	mid := strings.Index(s[i:], "](")
	if mid < 0 {
		return nil, 0
	}
	text := s[i+1 : i+mid]
	rest := s[i+mid+2:]
	end := strings.IndexAny(rest, ") \n")
	if end < 0 || rest[end] != ')' || strings.Contains(text, "\n") || text == "" {
		return nil, 0
	}
	u, err := url.Parse(rest[:end])
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, 0
	}
	return &widget.HyperlinkSegment{Text: plainInline(text), URL: u}, i + mid + 2 + end + 1
}

// plainInline is text whose inline markers are dropped: headings, nested spans.
func plainInline(s string) string {
	var b strings.Builder
	for _, seg := range inlineSegments(s) {
		b.WriteString(seg.Textual())
	}
	return b.String()
}

func runLen(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func isASCIIPunct(c byte) bool {
	return strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", c) >= 0
}
