//go:build !nogui

package app

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"strconv"
	"sync"

	"ember/app/ollama"
	"ember/app/openai"
	"ember/app/server"
	"ember/inference/engine"
	"ember/store"
	"ember/ui"
)

// Keys of the app's settings in the store.
const (
	settingServerOn   = "server.on"
	settingServerAddr = "server.addr"
	settingAPIKey     = "server.api_key"
	settingThreads    = "threads"
	settingNoGPU      = "no_gpu"
	settingContext    = "context_size"
	settingLookup     = "prompt_lookup"
	settingKVQ8       = "kv_q8_0"
)

// loadAppSettings reads the app's settings; missing ones are the defaults.
func loadAppSettings(ctx context.Context, st *store.Store) (ui.AppSettings, error) {
	var s ui.AppSettings
	get := func(key string) (string, error) {
		v, err := st.Setting(ctx, key)
		if errors.Is(err, store.ErrNotFound) {
			return "", nil
		}
		return v, err
	}
	var errs []error
	text := func(key string, dst *string) {
		v, err := get(key)
		errs = append(errs, err)
		*dst = v
	}
	num := func(key string, dst *int) {
		v, err := get(key)
		errs = append(errs, err)
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			*dst = n
		}
	}
	var on, noGPU, lookup, kvq8 string
	text(settingServerOn, &on)
	s.ServerOn = on == "true"
	text(settingLookup, &lookup)
	s.Lookup = lookup == "true"
	text(settingKVQ8, &kvq8)
	s.KVQ8 = kvq8 == "true"
	text(settingNoGPU, &noGPU)
	s.NoGPU = noGPU == "true"
	text(settingServerAddr, &s.ServerAddr)
	text(settingAPIKey, &s.APIKey)
	num(settingThreads, &s.Threads)
	num(settingContext, &s.ContextSize)
	return s, errors.Join(errs...)
}

// saveAppSettings writes the app's settings.
func saveAppSettings(ctx context.Context, st *store.Store, s ui.AppSettings) error {
	var errs []error
	for k, v := range map[string]string{
		settingServerOn: strconv.FormatBool(s.ServerOn), settingServerAddr: s.ServerAddr, settingAPIKey: s.APIKey,
		settingThreads: strconv.Itoa(s.Threads), settingContext: strconv.Itoa(s.ContextSize),
		settingNoGPU: strconv.FormatBool(s.NoGPU), settingLookup: strconv.FormatBool(s.Lookup),
		settingKVQ8: strconv.FormatBool(s.KVQ8),
	} {
		errs = append(errs, st.SetSetting(ctx, k, v))
	}
	return errors.Join(errs...)
}

// localServer is the API server running inside the app on the loaded model's
// engine; it is started again when the model or the settings change.
type localServer struct {
	mu     sync.Mutex
	cancel context.CancelFunc // stops the running server; nil when none; guarded by mu
	done   chan struct{}      // closed when it has stopped; guarded by mu
	addr   string             // where it listens; guarded by mu
}

// start stops any running server, then serves the API for l's engine eng with s
// when s.ServerOn; it returns once the server listens.
func (ls *localServer) start(s ui.AppSettings, l *Loaded, eng *engine.Engine) error {
	ls.stop()
	if !s.ServerOn || l == nil || eng == nil {
		return nil
	}
	addr := s.ServerAddr
	if addr == "" {
		addr = server.DefaultAddr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("local server: listen on %s: %w", addr, err)
	}
	metrics := server.NewMetrics()
	m := server.NewModel(eng, l.Name, l.File, nil, metrics)
	srv := server.New(server.Config{Addr: addr, APIKey: s.APIKey}, metrics,
		openai.New(m, openai.Options{}), ollama.New(m, ollama.Options{}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ctx, ln); err != nil {
			log.Printf("ember: local server: %v", err)
		}
	}()
	ls.mu.Lock()
	ls.cancel, ls.done, ls.addr = cancel, done, ln.Addr().String()
	ls.mu.Unlock()
	return nil
}

// stop stops the server, if one runs, and waits for it.
func (ls *localServer) stop() {
	ls.mu.Lock()
	cancel, done := ls.cancel, ls.done
	ls.cancel, ls.done, ls.addr = nil, nil, ""
	ls.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// status says where the server listens, or that it is off.
func (ls *localServer) status() string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.addr == "" {
		return "Local server off"
	}
	return "API at http://" + ls.addr + "/v1"
}
