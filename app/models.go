//go:build !nogui

package app

import (
	"context"
	"errors"
	"fmt"
	"log"
	"path/filepath"
	"strings"

	"ember/assets"
	"ember/inference/engine"
	"ember/store"
	"ember/ui"
)

var (
	_ ui.ModelSwitcher      = (*chatService)(nil)
	_ ui.AppSettingsService = (*chatService)(nil)
	_ ui.RemoteAdder        = (*chatService)(nil)
)

// ModelsFolder is the data folder's folder for model files the user keeps there.
const ModelsFolder = "models"

// LookupTokens is the most draft tokens a step of speculative decoding by prompt lookup
// takes when the app's setting is on (engine.Options.Lookup): four rows a step are what
// the CPU kernels decode in one pass over the weights (a fifth row cost a second pass:
// 59-75 tok/s against 91 with three drafts, two cores, Llama-3.2-1B shapes).
const LookupTokens = 3

// Sources of models besides DiscoverModels'.
const (
	SourceBundled = "bundled"
	SourceFolder  = "models folder"
	SourceAdded   = "added"
)

// LoadModel loads the GGUF file at id ("" for the bundled model) on the service's
// backend with an engine, then puts it in place of the model loaded before, which
// is closed. Chats running meanwhile keep the old model until they end. The local
// server, when on, moves to the new model; that it cannot start is logged, not an
// error of the load (ApplyAppSettings reports it).
func (c *chatService) LoadModel(ctx context.Context, id string) error {
	if strings.HasPrefix(id, remotePrefix) {
		return c.useRemote(ctx, id)
	}
	err := c.load(ctx, id)
	var se *serverError
	if errors.As(err, &se) {
		log.Printf("ember: %v", se.err)
		return nil
	}
	return err
}

// serverError is a local server that did not start after a load.
type serverError struct{ err error }

func (e *serverError) Error() string { return e.err.Error() }
func (e *serverError) Unwrap() error { return e.err }

// load is LoadModel, returning a *serverError when only the server failed.
func (c *chatService) load(ctx context.Context, id string) error {
	if id != "" {
		abs, err := filepath.Abs(id)
		if err != nil {
			return err
		}
		id = abs
	}
	c.mu.RLock()
	set, bo := c.set, c.bo
	c.mu.RUnlock()
	bo.Threads = set.Threads
	if set.NoGPU && (bo.Name == "" || bo.Name == "auto") { // a -backend flag wins
		bo.Name = "cpu"
	}
	bo.Stage = c.setStage
	defer c.setStage("")
	l, err := OpenModel(id, bo)
	if err != nil {
		return err
	}
	c.setStage("starting the engine")
	eo := engine.Options{ContextSize: set.ContextSize}
	if set.Lookup {
		eo.Lookup = LookupTokens
	}
	if set.KVQ8 {
		eo.KVType = "q8_0"
	}
	eng, bc, err := c.newEngine(ctx, l, eo)
	if err != nil && eo.KVType != "" {
		// A backend or model without a Q8_0 cache (CUDA; heads not of whole 32-value
		// blocks) runs on the F16 one.
		eo.KVType = ""
		eng, bc, err = c.newEngine(ctx, l, eo)
	}
	if err != nil {
		l.Close()
		return err
	}
	c.mu.Lock()
	if name := c.names[id]; name != "" {
		l.Name = name // e.g. an Ollama model's, not its blob's
	}
	oldM, oldBC, oldEng := c.m, c.bc, c.eng
	c.m, c.bc, c.eng, c.chat = l, bc, eng, NewChat(l)
	c.remote = nil
	c.mu.Unlock()
	// The server moves to the new engine before the old one closes.
	srvErr := c.srv.start(set, l, eng)
	closeModel(oldM, oldBC, oldEng)
	if srvErr != nil {
		return &serverError{srvErr}
	}
	return nil
}

// setStage records what the model's load is doing ("" when none runs).
func (c *chatService) setStage(s string) { c.stage.Store(s) }

// LoadStage says what the model's load is doing, "" when none runs (ui.LoadStager).
func (c *chatService) LoadStage() string {
	s, _ := c.stage.Load().(string)
	return s
}

// AppSettings are the settings in use.
func (c *chatService) AppSettings() ui.AppSettings {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.set
}

// newEngine starts an engine on l with eo and, with a data folder, its persistent
// prefix cache: reopening a conversation after a restart loads its prompt's KV blocks.
// A cache that cannot be opened (a full or read-only disk) is logged and left out: the
// chats still work, recomputing their prompts.
func (c *chatService) newEngine(ctx context.Context, l *Loaded, eo engine.Options) (*engine.Engine, *store.BlockCache, error) {
	var bc *store.BlockCache
	if c.dataDir != "" {
		var err error
		if bc, err = OpenBlockCache(ctx, c.dataDir, l, eo.KVType, DefaultBlockCacheBytes); err != nil {
			log.Printf("ember: persistent prefix cache off: %v", err)
		} else {
			eo.Blocks = bc
		}
	}
	eng, err := engine.New(l.Model, l.Tokenizer, eo)
	if err != nil {
		if bc != nil {
			bc.Close()
		}
		return nil, nil, fmt.Errorf("engine: %w", err)
	}
	return eng, bc, nil
}

// ApplyAppSettings saves s, reloads the model when its threads, context size, GPU use,
// prompt lookup or KV cache type changed, and starts or stops the local server.
func (c *chatService) ApplyAppSettings(ctx context.Context, s ui.AppSettings) (string, error) {
	if err := saveAppSettings(ctx, c.st, s); err != nil {
		return "", err
	}
	c.mu.Lock()
	old := c.set
	c.set = s
	l, eng := c.m, c.eng
	c.mu.Unlock()
	var err error
	if s.Threads != old.Threads || s.ContextSize != old.ContextSize || s.NoGPU != old.NoGPU || s.Lookup != old.Lookup ||
		s.KVQ8 != old.KVQ8 {
		err = c.load(ctx, c.CurrentModel()) // starts the server too
	} else {
		err = c.srv.start(s, l, eng)
	}
	return c.srv.status(), err
}

// closeModel closes an engine, then its prefix cache, then its model; nils are
// skipped.
func closeModel(m *Loaded, bc *store.BlockCache, eng *engine.Engine) {
	if eng != nil {
		eng.Close()
	}
	if bc != nil {
		bc.Close()
	}
	if m != nil {
		m.Close()
	}
}

// close frees the loaded model.
func (c *chatService) close() {
	c.srv.stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	closeModel(c.m, c.bc, c.eng)
	c.m, c.bc, c.eng, c.chat = nil, nil, nil, nil
}

// useRemote sends chats to the remote model id from now on.
func (c *chatService) useRemote(ctx context.Context, id string) error {
	c.mu.RLock()
	r, ok := c.remotes[id]
	c.mu.RUnlock()
	if !ok { // not listed yet in this run
		_, byID, err := c.remoteInfos(ctx)
		if r, ok = byID[id]; !ok {
			return errors.Join(fmt.Errorf("no remote model %s", strings.TrimPrefix(id, remotePrefix)), err)
		}
	}
	c.mu.Lock()
	c.remote = &r
	c.mu.Unlock()
	return nil
}

// CurrentModel is the loaded model's ID: its path, "" for the bundled one.
func (c *chatService) CurrentModel() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.remote != nil {
		return remoteID(c.remote.server, c.remote.model)
	}
	if c.m == nil {
		return ""
	}
	return c.m.Path
}

// AddModel checks that path is a GGUF model and remembers it.
func (c *chatService) AddModel(ctx context.Context, path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	m, err := describeModel(abs)
	if err != nil {
		return "", err
	}
	err = c.st.PutModel(ctx, store.Model{Path: abs, Name: ggufStem(abs), Arch: m.Arch, Size: m.Size, Quant: m.Quant,
		CtxLength: m.CtxLength, Source: SourceAdded})
	return abs, err
}

// Models lists what the user can load: the bundled model, the files of the models
// folder, the models added before, and those other apps keep (DiscoverModels). A
// file that cannot be read is left out.
func (c *chatService) Models(ctx context.Context) ([]ui.ModelInfo, error) {
	out := []ui.ModelInfo{{ID: "", Name: assets.DefaultModelName, Detail: "built in, tiny: writes short stories"}}
	seen := map[string]bool{}
	add := func(m FoundModel) {
		if seen[m.Path] {
			return
		}
		seen[m.Path] = true
		out = append(out, ui.ModelInfo{ID: m.Path, Name: m.Name, Detail: modelDetail(m)})
	}
	var errs []error
	files, err := ggufFiles(c.modelsDir)
	errs = append(errs, err)
	for _, f := range files {
		m, err := describeModel(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		m.Name, m.Source = ggufStem(f), SourceFolder
		add(m)
	}
	added, err := c.st.Models(ctx)
	errs = append(errs, err)
	for _, m := range added {
		add(FoundModel{Path: m.Path, Name: m.Name, Source: m.Source, Arch: m.Arch, Size: m.Size, Quant: m.Quant, CtxLength: m.CtxLength})
	}
	if c.home != "" {
		found, err := DiscoverModels(c.home)
		errs = append(errs, err)
		for _, m := range found {
			add(m)
		}
	}
	remote, byID, err := c.remoteInfos(ctx)
	errs = append(errs, err)
	out = append(out, remote...)
	names := map[string]string{}
	for _, m := range out {
		names[m.ID] = m.Name
	}
	c.mu.Lock()
	c.names, c.remotes = names, byID
	c.mu.Unlock()
	return out, errors.Join(errs...)
}

// modelDetail is a model's line under its name: "llama · Q4_K_M · 808 MB · 131072
// ctx · needs about 1.1 GB · ollama".
func modelDetail(m FoundModel) string {
	parts := []string{}
	for _, s := range []string{m.Arch, m.Quant} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if m.Size > 0 {
		parts = append(parts, formatBytes(m.Size))
	}
	if m.CtxLength > 0 {
		parts = append(parts, fmt.Sprintf("%d ctx", m.CtxLength))
	}
	if m.MemBytes > 0 {
		parts = append(parts, "needs about "+formatBytes(m.MemBytes))
	}
	if m.Source != "" {
		parts = append(parts, m.Source)
	}
	return strings.Join(parts, " · ")
}

// formatBytes is n in B, KB, MB or GB (powers of 1000, as file managers show).
func formatBytes(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.0f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.0f KB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}
