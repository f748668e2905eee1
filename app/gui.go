//go:build !nogui

package app

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"ember/assets"
	"ember/inference/engine"
	"ember/inference/prompt"
	"ember/inference/reasoning"
	"ember/inference/sample"
	"ember/store"
	"ember/ui"
)

// GUIOptions configure the desktop app.
type GUIOptions struct {
	ModelPath string // "" for the bundled model
	Backend   string
	DataDir   string // the data folder (conversations); "" for DefaultDataDir

	script    func(*ui.Control) // tests: drives the window (ui.RunScript)
	serveAddr string            // tests: the server's address when there is no display
	ready     func(addr string) // tests: told when that server listens
}

// noDisplay reports that a Linux or BSD session has neither an X11 nor a Wayland
// display to open a window on.
func noDisplay() bool {
	switch runtime.GOOS {
	case "linux", "freebsd", "openbsd", "netbsd", "dragonfly":
		return os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == ""
	}
	return false
}

// RunGUI opens the conversation database, loads the model and runs the desktop app
// until its window closes; then it closes them in the reverse order.
func RunGUI(ctx context.Context, opt GUIOptions) error {
	dir := opt.DataDir
	if dir == "" {
		var err error
		if dir, err = DefaultDataDir(); err != nil {
			return err
		}
	}
	if noDisplay() {
		log.Printf("ember: no display ($DISPLAY and $WAYLAND_DISPLAY are empty), so no window: serving the local API instead, as 'ember serve' does")
		ready := opt.ready
		if ready == nil {
			ready = func(addr string) {
				log.Printf("ember: serving the OpenAI API at http://%s/v1 and the Ollama API at http://%s/api", addr, addr)
			}
		}
		return Serve(ctx, ServeOptions{ModelPath: opt.ModelPath, Backend: BackendOptions{Name: opt.Backend}, DataDir: dir,
			DiskCacheBytes: DefaultBlockCacheBytes, Addr: opt.serveAddr, Ready: ready})
	}
	st, err := OpenHistory(ctx, dir)
	if err != nil {
		return fmt.Errorf("%w (-data DIR uses another folder)", err)
	}
	defer st.Close()
	home, _ := os.UserHomeDir() // no home: no models to discover
	svc := &chatService{bo: BackendOptions{Name: opt.Backend}, st: st, home: home, dataDir: dir,
		modelsDir: filepath.Join(dir, ModelsFolder)}
	if svc.set, err = loadAppSettings(ctx, st); err != nil {
		log.Printf("ember: settings: %v", err) // the defaults, then
	}
	if svc.startName, err = startName(opt.ModelPath); err != nil {
		return err
	}
	svc.startID = opt.ModelPath
	defer svc.close()
	ui.RunScript(svc, &history{st: st, model: svc.ModelName}, opt.script)
	return nil
}

// samplingParams are the engine's settings for a chat's.
func samplingParams(s ui.Sampling) (sample.Params, int) {
	p := DefaultSampling()
	maxTokens := defaultMaxTokens
	if s.Temperature != nil {
		p.Temperature = float32(*s.Temperature)
	}
	if s.TopK != nil {
		p.TopK = *s.TopK
	}
	if s.TopP != nil {
		p.TopP = float32(*s.TopP)
	}
	if s.MaxTokens != nil {
		maxTokens = *s.MaxTokens
	}
	return p, maxTokens
}

// chatService adapts the engine to the UI's ChatService and ModelSwitcher.
type chatService struct {
	bo        BackendOptions
	st        *store.Store // models added with "Add model..."
	home      string       // where to discover other apps' models; "" for none
	dataDir   string       // the data folder: the persistent prefix cache lives in it
	modelsDir string       // the data folder's models folder

	mu    sync.RWMutex      // Chat holds it to read; LoadModel to swap the model
	m     *Loaded           // guarded by mu
	bc    *store.BlockCache // the model's persistent prefix cache; nil without a data folder
	eng   *engine.Engine
	chat  *Chat
	names map[string]string // model ID -> display name, from the last Models; guarded by mu
	set   ui.AppSettings    // the app's settings; guarded by mu
	// remote, when set, is where chats go instead of m (which the local server
	// keeps using); remotes are the remote models of the last Models. Guarded by mu.
	remote  *remoteModel
	remotes map[string]remoteModel
	srv     localServer // the API inside the app, on m's engine
	// startID is the model loaded as the window opens (its path, "" for the bundled
	// one; ui.Starter), startName its name; "" once Start has run.
	startID, startName string
	stage              atomic.Value // string: what a load is doing (LoadStage)
}

// startName is the name of the model at path ("" for the bundled one) that the app
// loads as its window opens, or why the file cannot be that model: a missing or
// unreadable file is refused before any window opens, as a command line's mistake.
func startName(path string) (string, error) {
	if path == "" {
		return assets.DefaultModelName, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if _, err := describeModel(abs); err != nil {
		return "", openError(path, err)
	}
	return ggufStem(abs), nil
}

// Starting names the model the window opens with (ui.Starter).
func (c *chatService) Starting() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.startName
}

// Start loads the model the window opens with (ui.Starter).
func (c *chatService) Start(ctx context.Context) error {
	c.mu.Lock()
	id := c.startID
	c.startName = ""
	c.mu.Unlock()
	return c.LoadModel(ctx, id)
}

func (c *chatService) ModelName() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.remote != nil {
		return c.remote.model
	}
	if c.m == nil {
		return ""
	}
	return c.m.Name
}

func (c *chatService) BackendName() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.remote != nil {
		return "remote"
	}
	if c.m == nil {
		return ""
	}
	return c.m.BackendName()
}

// BackendNote says why the model runs on the CPU though a GPU is present; "" when it
// does not (ui.BackendNoter).
func (c *chatService) BackendNote() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.remote != nil || c.m == nil {
		return ""
	}
	return c.m.GPUNote
}

// Chat streams a reply: the conversation goes through the model's chat template, and
// R1-style <think> output comes back as reasoning.
func (c *chatService) Chat(ctx context.Context, req ui.ChatRequest, onDelta func(ui.Delta)) (ui.Stats, error) {
	c.mu.RLock() // the model stays while it answers
	defer c.mu.RUnlock()
	if c.remote != nil {
		return chatRemote(ctx, *c.remote, req, onDelta)
	}
	if c.chat == nil {
		return ui.Stats{}, errors.New("no model is loaded: choose one in the model menu")
	}
	msgs := make([]prompt.Message, 0, len(req.History))
	for _, m := range req.History {
		msgs = append(msgs, prompt.Message{Role: m.Role, Content: m.Content, ReasoningContent: m.Reasoning})
	}
	toks, thinking, err := c.chat.Tokens(ctx, msgs)
	if err != nil {
		return ui.Stats{}, err
	}
	params, maxTokens := samplingParams(req.Sampling)
	params.Seed = uint64(len(req.History))
	events, err := c.eng.Generate(ctx, engine.Request{Tokens: toks, MaxTokens: maxTokens, Sampling: params})
	if err != nil {
		return ui.Stats{}, err
	}
	split := reasoning.NewParser(thinking)
	emit := func(r, c string) {
		if r != "" || c != "" {
			onDelta(ui.Delta{Reasoning: r, Content: c})
		}
	}
	var last engine.Event
	for ev := range events {
		emit(split.Push(ev.Text))
		last = ev
	}
	emit(split.Flush())
	u := last.Usage
	st := ui.Stats{PromptTokens: u.PromptTokens, GenTokens: u.CompletionTokens, TTFT: u.TTFT, GenTime: u.GenTime,
		CachedTokens: u.CachedTokens, ContextSize: c.eng.ContextSize()}
	if u.CompletionTokens > 1 && u.GenTime > 0 {
		st.TokensPerSec = float64(u.CompletionTokens-1) / u.GenTime.Seconds()
	}
	if last.Err != nil && last.Finish != engine.FinishCancelled {
		return st, fmt.Errorf("generation failed: %w", last.Err)
	}
	return st, nil
}
