//go:build !nogui

package ui

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"fyne.io/fyne/v2/test"
)

// switchChat is a fakeChat that can switch models; LoadModel waits for a
// value on release.
type switchChat struct {
	*fakeChat
	release chan error

	mu      sync.Mutex
	current string // guarded by mu
	name    string // guarded by mu
	added   []string
}

func (s *switchChat) ModelName() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.name
}

func (s *switchChat) Models(context.Context) ([]ModelInfo, error) {
	return []ModelInfo{{ID: "", Name: "tiny-llama-1b-q4", Detail: "built in"},
		{ID: "/m/qwen.gguf", Name: "qwen2.5:0.5b", Detail: "qwen2 · Q4_K_M · 398 MB · ollama"}}, errors.New("one file unreadable")
}

func (s *switchChat) CurrentModel() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current
}

func (s *switchChat) LoadModel(_ context.Context, id string) error {
	if err := <-s.release; err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.current, s.name = id, strings.TrimSuffix(id[strings.LastIndex(id, "/")+1:], ".gguf")
	return nil
}

func (s *switchChat) AddModel(_ context.Context, path string) (string, error) {
	if !strings.HasSuffix(path, ".gguf") {
		return "", errors.New("not a GGUF file")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.added = append(s.added, path)
	return path, nil
}

func TestModelPicker(t *testing.T) {
	var sw *switchChat
	h := newHarnessWrapped(t, nil, func(f *fakeChat) ChatService {
		sw = &switchChat{fakeChat: f, release: make(chan error, 1), name: "tiny-llama-1b-q4"}
		return sw
	})
	if h.v.modelBtn == nil || h.v.modelBtn.Text != "tiny-llama-1b-q4  ·  CPU" {
		t.Fatalf("model button %+v", h.v.modelBtn)
	}

	// The menu lists the models, the loaded one checked, and Add model.
	test.Tap(h.v.modelBtn)
	h.loop.until(t, "the model menu", func() bool { return h.w.Canvas().Overlays().Top() != nil })
	models, _ := sw.Models(context.Background())
	menu := h.v.modelMenu(sw, models)
	if len(menu.Items) != 5 || !menu.Items[0].Checked || menu.Items[1].Checked || menu.Items[3].Label != addModelLabel ||
		menu.Items[1].Label != "qwen2.5:0.5b   —   qwen2 · Q4_K_M · 398 MB · ollama" {
		t.Errorf("menu %+v", menu.Items)
	}
	h.w.Canvas().Overlays().Remove(h.w.Canvas().Overlays().Top())

	// Loading: nothing can be sent until it is done.
	menu.Items[1].Action()
	if !h.v.sendBtn.Disabled() || !h.v.modelBtn.Disabled() || !h.v.loading.Visible() || h.v.stats.Text != "Loading qwen2.5:0.5b…" {
		t.Errorf("while loading: send %v, picker %v, status %q", !h.v.sendBtn.Disabled(), !h.v.modelBtn.Disabled(), h.v.stats.Text)
	}
	h.send("Hello")
	if h.v.cur != nil {
		t.Error("sent while a model loads")
	}
	sw.release <- nil
	h.loop.until(t, "the model to load", func() bool { return h.v.loadingID == nil })
	if h.v.sendBtn.Disabled() || h.v.loading.Visible() || h.v.modelBtn.Text != "qwen  ·  CPU" ||
		h.v.entry.PlaceHolder != "Message qwen" || !strings.Contains(h.v.hintText.String(), "Ask qwen anything") {
		t.Errorf("after loading: %q, %q, %q", h.v.modelBtn.Text, h.v.entry.PlaceHolder, h.v.hintText.String())
	}
	if h.v.stats.Text != "qwen2.5:0.5b is ready" {
		t.Errorf("status %q", h.v.stats.Text)
	}

	// A failed load says so and keeps the model.
	h.v.loadModel(sw, "", "tiny")
	sw.release <- errors.New("out of memory")
	h.loop.until(t, "the load to fail", func() bool { return h.v.loadingID == nil })
	if h.w.Canvas().Overlays().Top() == nil || h.v.modelBtn.Text != "qwen  ·  CPU" || h.v.sendBtn.Disabled() {
		t.Errorf("after a failed load: %q", h.v.modelBtn.Text)
	}
	h.w.Canvas().Overlays().Remove(h.w.Canvas().Overlays().Top())

	// Add model: the file is added, then loaded.
	h.v.addModel(sw, "/home/u/Downloads/phi.gguf")
	h.loop.until(t, "the added model to start loading", func() bool { return h.v.loadingID != nil })
	sw.release <- nil
	h.loop.until(t, "the added model to load", func() bool { return h.v.loadingID == nil })
	if sw.CurrentModel() != "/home/u/Downloads/phi.gguf" || len(sw.added) != 1 {
		t.Errorf("added %v, current %q", sw.added, sw.CurrentModel())
	}
	h.v.addModel(sw, "/home/u/notes.txt")
	h.loop.until(t, "the error", func() bool { return h.w.Canvas().Overlays().Top() != nil })

	// No switching while a reply streams.
	h.w.Canvas().Overlays().Remove(h.w.Canvas().Overlays().Top())
	h.send("Hi")
	if !h.v.modelBtn.Disabled() {
		t.Error("the picker is enabled while a reply streams")
	}
	h.v.loadModel(sw, "/m/qwen.gguf", "qwen")
	if h.v.loadingID != nil {
		t.Error("a model started loading while a reply streams")
	}
	h.svc.script(Stats{}, nil, Delta{Content: "Hey"})
	h.waitIdle()
	if h.v.modelBtn.Disabled() {
		t.Error("the picker stays disabled after the reply")
	}
}

// appChat is a fakeChat with app settings.
type appChat struct {
	*fakeChat
	mu      sync.Mutex
	set     AppSettings // guarded by mu
	applied chan AppSettings
	err     error
}

func (a *appChat) AppSettings() AppSettings {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.set
}

func (a *appChat) ApplyAppSettings(_ context.Context, s AppSettings) (string, error) {
	a.applied <- s
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return "Local server off", a.err
	}
	a.set = s
	return "API at http://" + s.ServerAddr + "/v1", nil
}

func TestAppSettings(t *testing.T) {
	var ac *appChat
	h := newHarnessWrapped(t, newFakeHistory(), func(f *fakeChat) ChatService {
		ac = &appChat{fakeChat: f, applied: make(chan AppSettings, 1), set: AppSettings{Threads: 4}}
		return ac
	})
	if h.v.appBtn == nil {
		t.Fatal("no settings button")
	}
	test.Tap(h.v.appBtn)
	if h.w.Canvas().Overlays().Top() == nil {
		t.Fatal("no settings dialog")
	}
	h.w.Canvas().Overlays().Remove(h.w.Canvas().Overlays().Top())

	want := AppSettings{ServerOn: true, ServerAddr: "127.0.0.1:8080", APIKey: "secret", ContextSize: 8192}
	h.v.applyAppSettings(ac, want)
	if !h.v.sendBtn.Disabled() || !h.v.appBtn.Disabled() || h.v.stats.Text != "Applying the settings…" {
		t.Errorf("while applying: send enabled %v, status %q", !h.v.sendBtn.Disabled(), h.v.stats.Text)
	}
	if got := <-ac.applied; got != want {
		t.Errorf("applied %+v", got)
	}
	h.loop.until(t, "the settings to apply", func() bool { return h.v.loadingID == nil })
	if h.v.sendBtn.Disabled() || h.v.stats.Text != "API at http://127.0.0.1:8080/v1" {
		t.Errorf("after: status %q", h.v.stats.Text)
	}

	ac.err = errors.New("listen tcp: address already in use")
	h.v.applyAppSettings(ac, want)
	<-ac.applied
	h.loop.until(t, "the settings to fail", func() bool { return h.v.loadingID == nil })
	if h.w.Canvas().Overlays().Top() == nil || h.v.stats.Text != "Local server off" {
		t.Errorf("after a failure: status %q", h.v.stats.Text)
	}
}

// AddRemote makes switchChat a RemoteAdder: "down" in the address fails.
func (s *switchChat) AddRemote(_ context.Context, url, key string) error {
	if strings.Contains(url, "down") {
		return errors.New("connection refused")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.added = append(s.added, url+" "+key)
	return nil
}

func TestAddRemote(t *testing.T) {
	var sw *switchChat
	h := newHarnessWrapped(t, nil, func(f *fakeChat) ChatService {
		sw = &switchChat{fakeChat: f, release: make(chan error, 1), name: "m"}
		return sw
	})
	menu := h.v.modelMenu(sw, nil)
	if n := len(menu.Items); n != 3 || menu.Items[2].Label != addRemoteLabel {
		t.Fatalf("menu %+v", menu.Items)
	}
	menu.Items[2].Action()
	if h.w.Canvas().Overlays().Top() == nil {
		t.Fatal("no dialog for a server")
	}
	h.w.Canvas().Overlays().Remove(h.w.Canvas().Overlays().Top())

	h.v.addRemote(sw, " http://gpu-box:8000 ", "key")
	h.loop.until(t, "the server to be added", func() bool { return strings.HasPrefix(h.v.stats.Text, "Added") })
	if h.v.stats.Text != "Added http://gpu-box:8000: its models are in the model list" || len(sw.added) != 1 {
		t.Errorf("status %q, added %q", h.v.stats.Text, sw.added)
	}
	h.v.addRemote(sw, "http://down:1", "")
	h.loop.until(t, "the error", func() bool { return h.w.Canvas().Overlays().Top() != nil })
}

// notingChat is a service whose model runs on the CPU though a GPU is present.
type notingChat struct {
	*fakeChat
	note string
}

func (n notingChat) BackendNote() string { return n.note }

// TestBackendNoteHint: a service that says why its model is not on the GPU has that
// said under the empty chat's hint; one with nothing to say keeps the hint as it is.
func TestBackendNoteHint(t *testing.T) {
	const why = "the GPU is not used: NVIDIA GeForce RTX 3090 has compute capability 8.6"
	h := newHarnessWrapped(t, nil, func(f *fakeChat) ChatService { return notingChat{f, why} })
	if got := h.v.hintText.String(); !strings.Contains(got, "Ask tiny-llama-1b-q4 anything") || !strings.Contains(got, "Running on the CPU: "+why) {
		t.Errorf("hint %q, want the model's hint and the note", got)
	}
	h = newHarnessWrapped(t, nil, func(f *fakeChat) ChatService { return notingChat{f, ""} })
	if got := h.v.hintText.String(); strings.Contains(got, "Running on") {
		t.Errorf("hint %q with nothing to note", got)
	}
}
