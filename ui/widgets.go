//go:build !nogui

package ui

import (
	"image/color"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Sizes of the transcript, in Fyne units (device-independent pixels).
const (
	columnMaxWidth  = 820  // the transcript column; longer lines are hard to read
	userMaxFraction = 0.78 // a user bubble takes at most this share of the column
	bubbleRadius    = 10
	bubblePadX      = 6 // inside a bubble, around its content (which has inner padding of its own)
	bubblePadY      = 2
	rowGap          = 10 // between transcript rows
)

// fillFunc picks a colour from the current theme and variant.
type fillFunc func(th fyne.Theme, v fyne.ThemeVariant) color.Color

// themedRect is a rounded rectangle whose fill is looked up in the theme on
// every Refresh, so bubbles follow a light/dark switch while the app runs (a
// bare canvas.Rectangle keeps the colour it was made with).
type themedRect struct {
	widget.BaseWidget
	fill   fillFunc
	radius float32
	min    fyne.Size // minimum size, e.g. the width of a bar
}

func newThemedRect(fill fillFunc, radius float32) *themedRect {
	r := &themedRect{fill: fill, radius: radius}
	r.ExtendBaseWidget(r)
	return r
}

func (r *themedRect) CreateRenderer() fyne.WidgetRenderer {
	rr := &themedRectRenderer{w: r, rect: canvas.NewRectangle(color.Transparent)}
	rr.Refresh()
	return rr
}

type themedRectRenderer struct {
	w    *themedRect
	rect *canvas.Rectangle
}

func (r *themedRectRenderer) Layout(size fyne.Size)        { r.rect.Resize(size) }
func (r *themedRectRenderer) MinSize() fyne.Size           { return r.w.min }
func (r *themedRectRenderer) Objects() []fyne.CanvasObject { return []fyne.CanvasObject{r.rect} }
func (r *themedRectRenderer) Destroy()                     {}
func (r *themedRectRenderer) Refresh() {
	r.rect.FillColor = r.w.fill(r.w.Theme(), fyne.CurrentApp().Settings().ThemeVariant())
	r.rect.CornerRadius = r.w.radius
	r.rect.Refresh()
}

// userFill is the primary colour, faint: user bubbles.
func userFill(th fyne.Theme, v fyne.ThemeVariant) color.Color {
	r, g, b, _ := th.Color(theme.ColorNamePrimary, v).RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 0x2e}
}

// assistantFill is the input background, a quiet grey in both variants.
func assistantFill(th fyne.Theme, v fyne.ThemeVariant) color.Color {
	return th.Color(theme.ColorNameInputBackground, v)
}

// codeFill is the background of a code block inside a reply: the window's
// background, so it stands out of the reply's grey.
func codeFill(th fyne.Theme, v fyne.ThemeVariant) color.Color {
	return th.Color(theme.ColorNameBackground, v)
}

// ruleFill is the bar left of the reasoning text.
func ruleFill(th fyne.Theme, v fyne.ThemeVariant) color.Color {
	return th.Color(theme.ColorNameSeparator, v)
}

// newBubble puts content on a rounded, themed background.
func newBubble(fill fillFunc, content fyne.CanvasObject) *fyne.Container {
	return container.NewStack(
		newThemedRect(fill, bubbleRadius),
		container.New(layout.NewCustomPaddedLayout(bubblePadY, bubblePadY, bubblePadX, bubblePadX), content),
	)
}

// rowLayout places one object (a bubble) in a transcript row: left or right
// aligned, at most maxFrac of the row's width, and no wider than pref()
// when pref is set. Its minimum width is zero so that wrapped text, not the
// window, gives way.
type rowLayout struct {
	right   bool
	maxFrac float32
	pref    func() float32    // preferred width; nil: as wide as allowed
	lead    fyne.CanvasObject // placed at its own size before the bubble, at the bottom (e.g. an edit button); may be nil
}

func (l *rowLayout) MinSize(objects []fyne.CanvasObject) fyne.Size {
	var h float32
	for _, o := range objects {
		if o.Visible() {
			h = max(h, o.MinSize().Height)
		}
	}
	return fyne.NewSize(0, h)
}

func (l *rowLayout) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	avail := size.Width
	var lead fyne.Size
	if l.lead != nil && l.lead.Visible() {
		lead = l.lead.MinSize()
		avail = max(0, avail-lead.Width)
	}
	w := avail * l.maxFrac
	if l.pref != nil {
		w = min(w, l.pref())
	}
	x := float32(0)
	if l.right {
		x = size.Width - w
	} else if l.lead != nil {
		x = lead.Width
	}
	for _, o := range objects {
		if o == l.lead {
			lx := x - lead.Width
			if !l.right {
				lx = 0
			}
			o.Move(fyne.NewPos(lx, size.Height-lead.Height))
			o.Resize(lead)
			continue
		}
		o.Move(fyne.NewPos(x, 0))
		o.Resize(fyne.NewSize(w, size.Height))
	}
}

// columnLayout centres its objects in a column at most maxWidth wide, one
// above the other as stacked layers (use it around one VBox).
type columnLayout struct{ maxWidth float32 }

func (l *columnLayout) MinSize(objects []fyne.CanvasObject) fyne.Size {
	var s fyne.Size
	for _, o := range objects {
		if o.Visible() {
			s = s.Max(o.MinSize())
		}
	}
	s.Width = min(s.Width, l.maxWidth)
	return s
}

func (l *columnLayout) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	w := min(size.Width, l.maxWidth)
	x := (size.Width - w) / 2
	for _, o := range objects {
		o.Move(fyne.NewPos(x, 0))
		o.Resize(fyne.NewSize(w, size.Height))
	}
}

// textWidth is the width that text needs unwrapped in a Label with the given
// style: its widest line plus the label's inner padding on both sides.
func textWidth(th fyne.Theme, text string, style fyne.TextStyle) float32 {
	size := th.Size(theme.SizeNameText)
	var w float32
	for line := range strings.SplitSeq(text, "\n") {
		w = max(w, fyne.MeasureText(line, size, style).Width)
	}
	return w + 2*th.Size(theme.SizeNameInnerPadding) + 1 // +1: rounding, so a line that fits is not wrapped
}

// dimText is wrapped text in the placeholder colour: reasoning and notes.
func dimText(text string) *widget.RichText {
	rt := widget.NewRichText(&widget.TextSegment{
		Text:  text,
		Style: widget.RichTextStyle{ColorName: theme.ColorNamePlaceHolder, Inline: true},
	})
	rt.Wrapping = fyne.TextWrapWord
	return rt
}

// setDimText replaces the text of a RichText made by dimText.
func setDimText(rt *widget.RichText, text string) {
	rt.Segments[0].(*widget.TextSegment).Text = text
	rt.Refresh()
}
