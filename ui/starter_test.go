//go:build !nogui

package ui

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

// startChat is a switchChat whose first model loads once the window is open
// (Starter); Start waits for a value on release, as LoadModel does.
type startChat struct {
	*switchChat
	starting string
	stage    atomic.Value // string (LoadStager)
}

func (s *startChat) LoadStage() string {
	v, _ := s.stage.Load().(string)
	return v
}

func (s *startChat) Starting() string { return s.starting }

func (s *startChat) Start(ctx context.Context) error {
	return s.LoadModel(ctx, "/m/"+s.starting+".gguf")
}

// TestStartLoad: the window opens before its first model has loaded, showing the
// load; nothing can be sent until it is done; the script (done) runs after it, and a
// failed first load leaves a window that says no model is loaded and offers the menu.
func TestStartLoad(t *testing.T) {
	for _, fail := range []bool{false, true} {
		var sc *startChat
		h := newHarnessWrapped(t, nil, func(f *fakeChat) ChatService {
			sc = &startChat{switchChat: &switchChat{fakeChat: f, release: make(chan error, 1)}, starting: "qwen"}
			return sc
		})
		if h.v.modelBtn.Text != noModelLabel {
			t.Errorf("before the load: model button %q", h.v.modelBtn.Text)
		}
		done := false
		h.v.startLoad(sc, func() { done = true })
		if !h.v.sendBtn.Disabled() || !h.v.modelBtn.Disabled() || !h.v.loading.Visible() ||
			h.v.stats.Text != "Loading qwen…" || !strings.Contains(h.v.hintText.String(), "Loading qwen…") {
			t.Errorf("while loading: send %v, picker %v, status %q, hint %q", !h.v.sendBtn.Disabled(),
				!h.v.modelBtn.Disabled(), h.v.stats.Text, h.v.hintText.String())
		}
		h.send("Hello")
		if h.v.cur != nil {
			t.Error("sent while the first model loads")
		}
		sc.stage.Store("loading the weights, 40%")
		h.loop.until(t, "the load's stage", func() bool { return h.v.stats.Text == "Loading qwen: loading the weights, 40%…" })
		if fail {
			sc.release <- errors.New("out of memory")
		} else {
			sc.release <- nil
		}
		h.loop.until(t, "the first load to end", func() bool { return done })
		if h.v.loadingID != nil || h.v.loading.Visible() || h.v.sendBtn.Disabled() || h.v.modelBtn.Disabled() {
			t.Errorf("after the load (fail %v): still loading", fail)
		}
		if fail {
			if h.w.Canvas().Overlays().Top() == nil || h.v.modelBtn.Text != noModelLabel ||
				!strings.Contains(h.v.hintText.String(), "No model is loaded") {
				t.Errorf("after a failed first load: %q, %q", h.v.modelBtn.Text, h.v.hintText.String())
			}
			h.w.Canvas().Overlays().Remove(h.w.Canvas().Overlays().Top())
			models, _ := sc.Models(context.Background())
			for _, it := range h.v.modelMenu(sc, models).Items {
				if it.Checked {
					t.Errorf("%q is checked with no model loaded", it.Label)
				}
			}
			// The menu still loads a model, even the one whose ID ("", the bundled
			// model's) is what a service with none says is current.
			h.v.loadModel(sc, "", "tiny")
			if h.v.loadingID == nil {
				t.Fatal("no load after a failed first load")
			}
			sc.release <- nil
			h.loop.until(t, "the bundled model to load", func() bool { return h.v.loadingID == nil })
			continue
		}
		if h.v.modelBtn.Text != "qwen  ·  CPU" || h.v.stats.Text != "qwen is ready" ||
			!strings.Contains(h.v.hintText.String(), "Ask qwen anything") {
			t.Errorf("after the first load: %q, %q, %q", h.v.modelBtn.Text, h.v.stats.Text, h.v.hintText.String())
		}
	}
}

// TestStartLoadNone: a Starter with nothing to load runs the script at once.
func TestStartLoadNone(t *testing.T) {
	var sc *startChat
	h := newHarnessWrapped(t, nil, func(f *fakeChat) ChatService {
		sc = &startChat{switchChat: &switchChat{fakeChat: f, release: make(chan error, 1), name: "tiny"}}
		return sc
	})
	done := false
	h.v.startLoad(sc, func() { done = true })
	if !done || h.v.loadingID != nil || h.v.sendBtn.Disabled() {
		t.Errorf("done %v, loading %v", done, h.v.loadingID != nil)
	}
}
