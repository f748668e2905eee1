//go:build !nogui

package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// answerView shows a reply's Markdown: runs of text in RichTexts, and each
// fenced code block in a box of its own with a copy button. Its widgets are
// kept across updates while the kinds of blocks stay the same, as they do
// while text streams into the last one. Fyne goroutine only.
type answerView struct {
	box      *fyne.Container // VBox of the blocks
	copyText func(string)
	blocks   []*answerBlock
}

// answerBlock is a run of text segments, or one code block.
type answerBlock struct {
	code bool
	rt   *widget.RichText
	obj  fyne.CanvasObject // rt, or the code box around it
	text string            // a code block's code, for its copy button
}

func newAnswerView(copyText func(string)) *answerView {
	return &answerView{box: container.NewVBox(), copyText: copyText}
}

// set shows the Markdown src. Blocks are kept up to the first one whose kind
// changed; new ones are made from there on.
func (a *answerView) set(src string) {
	parts := splitCode(markdownSegments(src))
	k := 0
	for k < len(parts) && k < len(a.blocks) && parts[k].code == a.blocks[k].code {
		k++
	}
	changed := k != len(parts) || k != len(a.blocks)
	if changed {
		a.blocks = a.blocks[:k]
		for _, p := range parts[k:] {
			a.blocks = append(a.blocks, a.newBlock(p.code))
		}
		objs := make([]fyne.CanvasObject, len(a.blocks))
		for i, b := range a.blocks {
			objs[i] = b.obj
		}
		a.box.Objects = objs
	}
	for i, p := range parts {
		b := a.blocks[i]
		b.rt.Segments = p.segs
		if p.code {
			b.text = p.segs[0].(*widget.TextSegment).Text
		}
		b.rt.Refresh()
	}
	if changed {
		a.box.Refresh()
	}
}

func (a *answerView) newBlock(code bool) *answerBlock {
	b := &answerBlock{code: code, rt: widget.NewRichText()}
	b.rt.Wrapping = fyne.TextWrapWord
	b.obj = b.rt
	if code {
		// Long lines wrap: a sideways scroller inside the transcript would take
		// the mouse wheel from it.
		btn := widget.NewButtonWithIcon("", theme.ContentCopyIcon(), func() { a.copyText(b.text) })
		btn.Importance = widget.LowImportance
		inner := container.NewBorder(nil, nil, nil, container.NewVBox(btn, layout.NewSpacer()), b.rt)
		b.obj = newBubble(codeFill, inner)
	}
	return b
}

// codePart is a run of segments for one block.
type codePart struct {
	code bool
	segs []widget.RichTextSegment
}

// splitCode cuts segments at code blocks. Gaps at the edges of a run of text
// are dropped (the blocks' box spaces them), and so is a run of only gaps.
func splitCode(segs []widget.RichTextSegment) []codePart {
	var parts []codePart
	var run []widget.RichTextSegment
	isGap := func(s widget.RichTextSegment) bool {
		t, ok := s.(*widget.TextSegment)
		return ok && t.Text == "" && t.Style == blockGap
	}
	flush := func() {
		for len(run) > 0 && isGap(run[0]) {
			run = run[1:]
		}
		for len(run) > 0 && isGap(run[len(run)-1]) {
			run = run[:len(run)-1]
		}
		if len(run) > 0 {
			parts = append(parts, codePart{segs: run})
		}
		run = nil
	}
	for _, s := range segs {
		if t, ok := s.(*widget.TextSegment); ok && t.Style == widget.RichTextStyleCodeBlock {
			flush()
			parts = append(parts, codePart{code: true, segs: []widget.RichTextSegment{s}})
			continue
		}
		run = append(run, s)
	}
	flush()
	return parts
}
