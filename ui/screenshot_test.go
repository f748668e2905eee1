//go:build !nogui

package ui

import (
	"context"
	"errors"
	"flag"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
)

var update = flag.Bool("update", false, "rewrite the golden screenshots under testdata/")

// variantTheme is Fyne's default theme held to one variant (the test app
// reports no light/dark preference).
type variantTheme struct {
	fyne.Theme
	v fyne.ThemeVariant
}

func (t variantTheme) Color(n fyne.ThemeColorName, _ fyne.ThemeVariant) color.Color {
	return t.Theme.Color(n, t.v)
}

// TestScreenshot renders the window after a two-turn conversation to
// testdata/chat.png (light) and chat-dark.png, and compares it with them.
// After a deliberate change of look: go test ./ui -run Screenshot -update,
// then look at the pictures before committing them.
func TestScreenshot(t *testing.T) {
	for _, tc := range []struct {
		golden  string
		variant fyne.ThemeVariant
		play    func(s *scene)
		hist    bool // with a History, so with the sidebar
		models  bool // with a ModelSwitcher, so with a model picker
	}{
		{"chat.png", theme.VariantLight, conversation, false, false},
		{"chat-dark.png", theme.VariantDark, conversation, false, false},
		{"chat-streaming.png", theme.VariantLight, failedThenStreaming, false, false},
		{"chat-empty.png", theme.VariantLight, func(*scene) {}, false, false},
		{"chat-sidebar.png", theme.VariantLight, savedChats, true, false},
		{"chat-sidebar-dark.png", theme.VariantDark, savedChats, true, false},
		{"chat-settings.png", theme.VariantLight, settingsDialog, true, false},
		{"chat-models.png", theme.VariantLight, modelMenu, true, true},
		{"chat-code.png", theme.VariantLight, codeReply, false, false},
		{"app-settings.png", theme.VariantLight, appSettingsDialog, true, true},
		{"chat-code-dark.png", theme.VariantDark, codeReply, false, false},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			var hist History
			if tc.hist {
				hist = newFakeHistory()
			}
			wrap := func(f *fakeChat) ChatService { return f }
			if tc.models {
				wrap = func(f *fakeChat) ChatService {
					sw := &switchChat{fakeChat: f, release: make(chan error, 1), name: f.ModelName()}
					return &appSwitchChat{switchChat: sw, appChat: &appChat{fakeChat: f,
						set: AppSettings{ServerOn: true, ServerAddr: "127.0.0.1:11435", APIKey: "secret", Threads: 8}}}
				}
			}
			h := newHarnessWrapped(t, hist, wrap)
			test.ApplyTheme(t, variantTheme{theme.DefaultTheme(), tc.variant})
			s := &scene{h: h, clock: time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)}
			h.v.now = func() time.Time { return s.clock }
			size := fyne.NewSize(760, 700)
			if tc.hist {
				size = fyne.NewSize(1000, 700)
			}
			h.w.Resize(size)
			tc.play(s)

			settle(h, size)
			img := h.w.Canvas().Capture()
			if *update {
				writePNG(t, filepath.Join("testdata", tc.golden), img)
				return
			}
			assertImage(t, tc.golden, img)
		})
	}
}

// scene plays a conversation into the window one delta at a time.
type scene struct {
	h     *harness
	clock time.Time // what chatView.now returns
}

// step sends one delta and waits until it is shown, so each flush holds
// exactly one delta and the clock readings are the same on every run.
func (s *scene) step(d Delta, after time.Duration) {
	s.clock = s.clock.Add(after)
	s.h.svc.cmds <- cmd{d: d}
	s.h.loop.until(s.h.t, "delta "+d.Content+d.Reasoning, func() bool {
		return strings.HasSuffix(s.h.last.content.String(), d.Content) &&
			strings.HasSuffix(s.h.last.reasoning.String(), d.Reasoning)
	})
}

func (s *scene) end(st Stats, err error) {
	s.h.svc.cmds <- cmd{end: true, st: st, err: err}
	s.h.waitIdle()
}

// conversation is two finished turns with reasoning, the last unfolded.
func conversation(s *scene) {
	s.h.send("What is the capital of France?")
	s.step(Delta{Reasoning: "A simple geography question. "}, 200*time.Millisecond)
	s.step(Delta{Reasoning: "The answer is Paris; one sentence is enough."}, 500*time.Millisecond)
	s.step(Delta{Content: "The capital of France is **Paris**."}, 700*time.Millisecond)
	s.end(Stats{PromptTokens: 24, GenTokens: 31, TokensPerSec: 24.6, TTFT: 190 * time.Millisecond}, nil)

	s.h.send("Name three things to see there, briefly.")
	s.step(Delta{Reasoning: "Three famous sights, one line each: "}, 150*time.Millisecond)
	s.step(Delta{Reasoning: "the Eiffel Tower, the Louvre, Notre-Dame. Keep it short and practical."}, 1400*time.Millisecond)
	s.step(Delta{Content: "Here are three:\n\n1. **Eiffel Tower**: go up at dusk for the view.\n"}, 900*time.Millisecond)
	s.step(Delta{Content: "2. **The Louvre**: arrive early; the *Mona Lisa* room fills fast.\n"}, 600*time.Millisecond)
	s.step(Delta{Content: "3. **Notre-Dame**: reopened in December 2024.\n\nWant a `one-day` plan?"}, 600*time.Millisecond)
	s.end(Stats{PromptTokens: 88, GenTokens: 96, TokensPerSec: 23.4, TTFT: 182 * time.Millisecond}, nil)
	test.Tap(s.h.last.thinking.header) // unfold the last reasoning, to show it
	s.h.v.entry.SetText("And the best time of year to visit?")
}

// savedChats is three saved chats, the second one shown with a system prompt,
// and a search under way.
func savedChats(s *scene) {
	for _, q := range []string{"Plan a weekend in Lisbon", "Why is the sky blue?", "Sourdough starter schedule"} {
		s.h.send(q)
		s.step(Delta{Content: "Short answer about " + strings.ToLower(q) + "."}, 400*time.Millisecond)
		s.end(Stats{}, nil)
		test.Tap(s.h.v.newBtn)
	}
	s.h.v.side.list.Select(1)
	s.h.v.setSettings("Explain like I am ten.", Sampling{})
	s.h.send("And why are sunsets red?")
	s.step(Delta{Reasoning: "Rayleigh scattering again, longer path. "}, 300*time.Millisecond)
	s.step(Delta{Content: "At sunset, light crosses **much more air**, so the blue is scattered away and the reds and oranges are left."}, 600*time.Millisecond)
	s.end(Stats{PromptTokens: 61, GenTokens: 27, TokensPerSec: 25.1, TTFT: 170 * time.Millisecond}, nil)
}

// settingsDialog is the chat settings dialog over a new chat with a system
// prompt and a temperature.
func settingsDialog(s *scene) {
	temp := 0.3
	s.h.v.setSettings("You are a patient teacher. Explain step by step, with one example.", Sampling{Temperature: &temp})
	s.h.v.showSettingsDialog()
}

// codeReply is a reply with a code block and some text after it.
func codeReply(s *scene) {
	s.h.send("How do I read a file line by line in Go?")
	s.step(Delta{Content: "Use a `bufio.Scanner`:\n\n```go\nf, err := os.Open(\"notes.txt\")\nif err != nil {\n\treturn err\n}\ndefer f.Close()\n"}, 300*time.Millisecond)
	s.step(Delta{Content: "sc := bufio.NewScanner(f)\nfor sc.Scan() {\n\tfmt.Println(sc.Text()) // one line, without its newline; a long comment that has to wrap in a narrow window\n}\nreturn sc.Err()\n```\n\nLines longer than 64 KB need `sc.Buffer`."}, 500*time.Millisecond)
	s.end(Stats{PromptTokens: 40, GenTokens: 70, TokensPerSec: 22.8, TTFT: 160 * time.Millisecond, ContextSize: 4096}, nil)
}

// appSwitchChat can switch models and has app settings, as the app.
type appSwitchChat struct {
	*switchChat
	*appChat
}

func (a *appSwitchChat) ModelName() string { return a.switchChat.ModelName() }
func (a *appSwitchChat) BackendName() string {
	return a.switchChat.BackendName()
}
func (a *appSwitchChat) Chat(ctx context.Context, req ChatRequest, onDelta func(Delta)) (Stats, error) {
	return a.switchChat.Chat(ctx, req, onDelta)
}

// appSettingsDialog is Ember's settings dialog.
func appSettingsDialog(s *scene) {
	test.Tap(s.h.v.appBtn)
}

// modelMenu is the model picker's menu open over a new chat.
func modelMenu(s *scene) {
	test.Tap(s.h.v.modelBtn)
	s.h.loop.until(s.h.t, "the model menu", func() bool { return s.h.w.Canvas().Overlays().Top() != nil })
}

// failedThenStreaming is a failed turn, then a long question whose reply is
// still thinking.
func failedThenStreaming(s *scene) {
	s.h.send("Hello?")
	s.end(Stats{}, errors.New("engine: model file truncated at tensor \"blk.7.ffn_down.weight\""))
	s.h.v.entry.SetText("")
	s.h.send("I have a 2 GB GGUF file and 8 GB of RAM. Which quantization should I pick so that the model fits " +
		"and still answers well, and how much memory does the context take?")
	s.step(Delta{Reasoning: "8 GB of RAM, a 2 GB file: memory is not the problem. "}, 300*time.Millisecond)
	s.step(Delta{Reasoning: "The KV cache grows with context length: 2 × layers × heads × head_dim × bytes per token…"}, 900*time.Millisecond)
}

// settle lays the window out until wrapped text has found its height (a
// real window does this frame by frame) and scrolls to the end.
func settle(h *harness, size fyne.Size) {
	for range 3 {
		h.w.Resize(size.AddWidthHeight(1, 0))
		h.w.Resize(size)
		h.v.root.Refresh()
	}
	h.v.scroll.ScrollToBottom()
}

// assertImage compares img with testdata/name: exactly on linux/amd64, where
// the goldens are made, and with some slack for anti-aliasing elsewhere. On a
// mismatch the image is written to testdata/failed/name.
func assertImage(t *testing.T, name string, img image.Image) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("golden: %v (make it with -update)", err)
	}
	defer f.Close()
	want, err := png.Decode(f)
	if err != nil {
		t.Fatalf("golden %s: %v", name, err)
	}
	tol := 0
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		tol = 48
	}
	got, exp := toNRGBA(img), toNRGBA(want)
	if got.Bounds() != exp.Bounds() {
		writePNG(t, filepath.Join("testdata", "failed", name), img)
		t.Fatalf("%s: size %v, golden %v", name, got.Bounds(), exp.Bounds())
	}
	bad := 0
	for i := range got.Pix {
		d := int(got.Pix[i]) - int(exp.Pix[i])
		if d > tol || -d > tol {
			bad++
		}
	}
	if bad > 0 {
		path := filepath.Join("testdata", "failed", name)
		writePNG(t, path, img)
		t.Errorf("%s: %d channel values differ from the golden; the new image is %s (if the change is meant, rerun with -update)", name, bad, path)
	}
}

func toNRGBA(img image.Image) *image.NRGBA {
	if n, ok := img.(*image.NRGBA); ok && n.Rect.Min == (image.Point{}) {
		return n
	}
	b := img.Bounds()
	n := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(n, n.Bounds(), img, b.Min, draw.Src)
	return n
}

func writePNG(t *testing.T, path string, img image.Image) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
