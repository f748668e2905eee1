//go:build !nogui

package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

const (
	addModelLabel  = "Add model…"
	addRemoteLabel = "Add a server…"
	noModelLabel   = "No model loaded"
)

// newModelPicker is the left of the status bar for a service that can switch
// models: a button with the model's name that opens the list of models, and a
// progress bar while one loads.
func (v *chatView) newModelPicker(sw ModelSwitcher) fyne.CanvasObject {
	v.modelBtn = widget.NewButtonWithIcon("", theme.MenuDropDownIcon(), func() { v.showModels(sw) })
	v.modelBtn.Importance = widget.LowImportance
	v.modelBtn.Alignment = widget.ButtonAlignLeading
	v.modelBtn.IconPlacement = widget.ButtonIconTrailingText
	v.loading = widget.NewProgressBarInfinite()
	v.loading.Hide()
	v.loading.Stop()
	return container.NewHBox(v.modelBtn, container.NewCenter(v.loading))
}

// refreshModel shows the loaded model's name wherever it appears.
func (v *chatView) refreshModel() {
	name := v.svc.ModelName()
	if name == "" { // none loaded yet, or its load failed
		v.model.SetText(noModelLabel)
		if v.modelBtn != nil {
			v.modelBtn.SetText(noModelLabel)
		}
		v.entry.SetPlaceHolder("Message")
		setDimText(v.hintText, "No model is loaded.\nChoose one in the menu at the bottom left.")
		return
	}
	label := name + "  ·  " + backendLabel(v.svc.BackendName())
	v.model.SetText(label)
	if v.modelBtn != nil {
		v.modelBtn.SetText(label)
	}
	v.entry.SetPlaceHolder("Message " + name)
	hint := fmt.Sprintf("Ask %s anything.\nEnter sends, Shift+Enter starts a new line.", name)
	if n, ok := v.svc.(BackendNoter); ok && n.BackendNote() != "" {
		hint += "\n\nRunning on the CPU: " + n.BackendNote()
	}
	setDimText(v.hintText, hint)
}

// showModels lists the models (read on another goroutine) in a menu above the
// model button.
func (v *chatView) showModels(sw ModelSwitcher) {
	if v.win == nil || v.cur != nil || v.loadingID != nil {
		return
	}
	v.modelBtn.Disable()
	go func() {
		models, err := sw.Models(context.Background())
		v.post(func() {
			v.setBusy(v.cur != nil)
			if err != nil && len(models) == 0 {
				v.showError("Cannot list the models", err)
				return
			}
			menu := v.modelMenu(sw, models)
			c := v.win.Canvas()
			pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(v.modelBtn)
			h := widget.NewMenu(menu).MinSize().Height // open upwards, from the status bar
			widget.ShowPopUpMenuAtPosition(menu, c, pos.SubtractXY(0, h))
		})
	}()
}

// modelMenu has one item per model, the loaded one checked, then "Add model…".
func (v *chatView) modelMenu(sw ModelSwitcher, models []ModelInfo) *fyne.Menu {
	cur, loaded := sw.CurrentModel(), v.svc.ModelName() != "" // none is checked when none is loaded
	var items []*fyne.MenuItem
	for _, m := range models {
		label := m.Name
		if m.Detail != "" {
			label += "   —   " + m.Detail
		}
		it := fyne.NewMenuItem(label, func() { v.loadModel(sw, m.ID, m.Name) })
		it.Checked = m.ID == cur && loaded
		items = append(items, it)
	}
	items = append(items, fyne.NewMenuItemSeparator(), fyne.NewMenuItem(addModelLabel, func() { v.showAddModelDialog(sw) }))
	if ra, ok := sw.(RemoteAdder); ok {
		items = append(items, fyne.NewMenuItem(addRemoteLabel, func() { v.showAddRemoteDialog(ra) }))
	}
	return fyne.NewMenu("", items...)
}

// loadModel replaces the model with id (named name) on another goroutine; the
// chat waits meanwhile.
func (v *chatView) loadModel(sw ModelSwitcher, id, name string) {
	if v.cur != nil || v.loadingID != nil || (id == sw.CurrentModel() && v.svc.ModelName() != "") {
		return // ("" is both the bundled model's ID and no model's, after a failed first load)
	}
	v.runLoad(id, name, func() error { return sw.LoadModel(context.Background(), id) }, nil)
}

// startLoad loads the service's first model (Starter) as the window opens; done, if
// not nil, runs once the load has ended. Fyne goroutine.
func (v *chatView) startLoad(st Starter, done func()) {
	name := st.Starting()
	if name == "" {
		if done != nil {
			done()
		}
		return
	}
	setDimText(v.hintText, "Loading "+name+"…\nA first start on a GPU can take a minute.")
	v.runLoad("", name, func() error { return st.Start(context.Background()) }, done)
}

// runLoad runs load (a model's, id named name) on another goroutine with the progress
// bar shown and the chat waiting; then done, if not nil. Fyne goroutine.
func (v *chatView) runLoad(id, name string, load func() error, done func()) {
	v.loadingID = &id
	v.setBusy(false)
	if v.loading != nil {
		v.loading.Show()
		v.loading.Start()
	}
	v.stats.SetText("Loading " + name + "…")
	ended := make(chan struct{})
	if ls, ok := v.svc.(LoadStager); ok {
		go v.showStages(ls, name, ended)
	}
	go func() {
		err := load()
		close(ended)
		v.post(func() {
			v.modelLoaded(name, err)
			if done != nil {
				done()
			}
		})
	}()
}

// stagePoll is how often the status bar asks a load what it is doing.
const stagePoll = 200 * time.Millisecond

// showStages shows in the status bar what the load of the model named name is doing,
// until ended is closed. Its own goroutine.
func (v *chatView) showStages(ls LoadStager, name string, ended <-chan struct{}) {
	tick := time.NewTicker(stagePoll)
	defer tick.Stop()
	last := ""
	for {
		select {
		case <-ended:
			return
		case <-tick.C:
		}
		if s := ls.LoadStage(); s != "" && s != last {
			last = s
			v.post(func() {
				if v.loadingID != nil {
					v.stats.SetText("Loading " + name + ": " + s + "…")
				}
			})
		}
	}
}

func (v *chatView) modelLoaded(name string, err error) {
	v.loadingID = nil
	if v.loading != nil {
		v.loading.Stop()
		v.loading.Hide()
	}
	v.setBusy(v.cur != nil)
	v.refreshModel()
	if err != nil {
		v.stats.SetText("")
		v.showError("Cannot load "+name, err)
		return
	}
	v.stats.SetText(name + " is ready")
}

// showAddModelDialog picks a GGUF file, adds it and loads it.
func (v *chatView) showAddModelDialog(sw ModelSwitcher) {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil {
			v.showError("Cannot open the model", err)
			return
		}
		if r == nil {
			return
		}
		path := r.URI().Path()
		r.Close()
		v.addModel(sw, path)
	}, v.win)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".gguf", ".GGUF"}))
	d.Show()
}

// addModel adds the file at path (on another goroutine: it reads the file)
// and loads it.
func (v *chatView) addModel(sw ModelSwitcher, path string) {
	go func() {
		id, err := sw.AddModel(context.Background(), path)
		v.post(func() {
			if err != nil {
				v.showError("Cannot add the model", err)
				return
			}
			name := path[strings.LastIndexAny(path, `/\`)+1:]
			v.loadModel(sw, id, strings.TrimSuffix(name, ".gguf"))
		})
	}()
}

// showAddRemoteDialog asks for an OpenAI-compatible or Ollama server's address
// and API key, and adds it.
func (v *chatView) showAddRemoteDialog(ra RemoteAdder) {
	addr := widget.NewEntry()
	addr.SetPlaceHolder("http://gpu-box:8000 (vLLM, SGLang, llama.cpp) or http://host:11434 (Ollama)")
	key := widget.NewPasswordEntry()
	key.SetPlaceHolder("none")
	items := []*widget.FormItem{
		{Text: "Address", Widget: addr, HintText: "an OpenAI-compatible API: its models show in the list"},
		{Text: "API key", Widget: key},
	}
	d := dialog.NewForm("Add a server", "Add", "Cancel", items, func(ok bool) {
		if ok {
			v.addRemote(ra, addr.Text, key.Text)
		}
	}, v.win)
	d.Resize(fyne.NewSize(600, 0))
	d.Show()
}

// addRemote adds a server on another goroutine and says how it went.
func (v *chatView) addRemote(ra RemoteAdder, addr, key string) {
	v.stats.SetText("Asking " + strings.TrimSpace(addr) + " for its models…")
	go func() {
		err := ra.AddRemote(context.Background(), addr, key)
		v.post(func() {
			if err != nil {
				v.stats.SetText("")
				v.showError("Cannot add the server", err)
				return
			}
			v.stats.SetText("Added " + strings.TrimSpace(addr) + ": its models are in the model list")
		})
	}()
}
