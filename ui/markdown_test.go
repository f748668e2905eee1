//go:build !nogui

package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/widget"
)

// describe writes segments compactly: one per line, kind then text.
func describe(segs []widget.RichTextSegment) string {
	var b strings.Builder
	for _, s := range segs {
		switch s := s.(type) {
		case *widget.TextSegment:
			switch {
			case s.Style == blockGap:
				b.WriteString("gap")
			case s.Style == widget.RichTextStyleParagraph && s.Text == "":
				b.WriteString("end")
			default:
				b.WriteString(styleName(s.Style) + " " + s.Text)
			}
		case *widget.HyperlinkSegment:
			b.WriteString("link " + s.Text + " -> " + s.URL.String())
		case *widget.SeparatorSegment:
			b.WriteString("rule")
		default:
			b.WriteString("?")
		}
		b.WriteString("|")
	}
	return b.String()
}

func styleName(st widget.RichTextStyle) string {
	bold := st
	bold.TextStyle.Bold = true
	switch st {
	case widget.RichTextStyleInline:
		return "t"
	case widget.RichTextStyleStrong:
		return "b"
	case widget.RichTextStyleEmphasis:
		return "i"
	case widget.RichTextStyleCodeInline:
		return "c"
	case widget.RichTextStyleCodeBlock:
		return "pre"
	case widget.RichTextStyleSubHeading:
		return "h"
	case widget.RichTextStyleBlockquote:
		return "quote"
	}
	if st.TextStyle.Bold && st.TextStyle.Italic && st.Inline {
		return "bi"
	}
	if st == func() widget.RichTextStyle { s := widget.RichTextStyleParagraph; s.TextStyle.Bold = true; return s }() {
		return "h3"
	}
	return "?"
}

func TestMarkdownSegments(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"Hi! I am [fine].", "t Hi! I am [fine].|end|"},
		{"one\ntwo\n\nthree", "t one\ntwo|end|gap|t three|end|"},
		{"The capital is **Paris**.", "t The capital is |b Paris|t .|end|"},
		{"*a* and _b_ and ***c***", "i a|t  and |i b|t  and |bi c|end|"},
		{"snake_case_name and 2 * 3 * 4", "t snake_case_name and 2 * 3 * 4|end|"},
		{"**unclosed bold", "t **unclosed bold|end|"},
		{"*a **b** c*", "i a b c|end|"},
		{"use `go test ./...` now", "t use |c go test ./...|t  now|end|"},
		{"`` a`b ``", "c  a`b |end|"},
		{`\*not\* emphasis`, "t *not* emphasis|end|"},
		{"see [docs](https://go.dev/doc) ok", "t see |link docs -> https://go.dev/doc|t  ok|end|"},
		{"[x](javascript:alert(1))", "t [x](javascript:alert(1))|end|"},
		{"# Title\ntext", "h Title|gap|t text|end|"},
		{"### **Small**", "h3 Small|"},
		{"```go\nfunc main() {\n}\n```\nafter", "pre func main() {\n}|gap|t after|end|"},
		{"```\nstill streaming", "pre still streaming|"},
		{"- one\n- **two**\n  more\n  - nested\n\n- three", "t •  |t one|end|t •  |b two|t \nmore|end|t     •  |t nested|end|t •  |t three|end|"},
		{"1. first\n2) second", "t 1.  |t first|end|t 2.  |t second|end|"},
		{"> quoted\n> text", "quote quoted\ntext|"},
		{"a\n---\nb", "t a|end|gap|rule|gap|t b|end|"},
		{"| a | b |\n|---|---|\n| 1 | 2 |", "pre | a | b |\n|---|---|\n| 1 | 2 ||"},
	} {
		got := describe(markdownSegments(tc.in))
		if got != tc.want {
			t.Errorf("markdownSegments(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}
