package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"ember/app/ollama"
	"ember/app/openai"
	"ember/app/server"
	"ember/inference/engine"
)

// ServeOptions configure `ember serve`: the model and the local API server.
type ServeOptions struct {
	ModelPath   string
	Backend     BackendOptions
	ContextSize int    // positions per sequence; 0: the model's, at most 4096
	Parallel    int    // sequences generated at once (continuous batching); 0 means 4
	CacheTokens int    // KV-cache positions shared by all sequences; 0: engine default
	Lookup      int    // draft tokens of speculative decoding by prompt lookup a step; 0: off
	KVType      string // the KV cache's type: "f16" ("" too) or "q8_0" (engine.Options.KVType)
	// DataDir holds the persistent prefix cache (DataDir/kvcache), capped at
	// DiskCacheBytes; "" or a cap <= 0 turns it off.
	DataDir        string
	DiskCacheBytes int64
	Addr           string // "" means server.DefaultAddr (127.0.0.1:11435)
	APIKey         string
	AllowedHosts   []string
	AllowedOrigins []string
	Logger         *slog.Logger
	// Ready, when set, receives the address the server listens on.
	Ready func(addr string)
}

// Serve loads the model and serves the OpenAI- and Ollama-compatible API until ctx
// ends, then shuts down in order: server, engine, model.
func Serve(ctx context.Context, o ServeOptions) error {
	l, err := OpenModel(o.ModelPath, o.Backend)
	if err != nil {
		return err
	}
	defer l.Close()
	logger := o.Logger
	if logger == nil {
		logger = slog.Default()
	}
	if l.GPUNote != "" {
		logger.Warn("running on the CPU", "why", l.GPUNote)
	}
	eo := engine.Options{ContextSize: o.ContextSize, Parallel: o.Parallel, CacheTokens: o.CacheTokens, Lookup: o.Lookup, KVType: o.KVType}
	if o.DataDir != "" && o.DiskCacheBytes > 0 {
		// Without it the server still serves, recomputing prompts: say so and go on.
		if bc, err := OpenBlockCache(ctx, o.DataDir, l, o.KVType, o.DiskCacheBytes); err != nil {
			logger.Warn("persistent prefix cache off", "err", err)
		} else {
			defer bc.Close()
			eo.Blocks = bc
		}
	}
	eng, err := engine.New(l.Model, l.Tokenizer, eo)
	if err != nil {
		return err
	}
	defer eng.Close()
	metrics := server.NewMetrics()
	m := server.NewModel(eng, l.Name, l.File, nil, metrics)
	srv := server.New(server.Config{
		Addr: o.Addr, APIKey: o.APIKey, AllowedHosts: o.AllowedHosts,
		AllowedOrigins: o.AllowedOrigins, Logger: o.Logger,
	}, metrics, openai.New(m, openai.Options{}), ollama.New(m, ollama.Options{}))
	addr := o.Addr
	if addr == "" {
		addr = server.DefaultAddr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	if o.Ready != nil {
		o.Ready(ln.Addr().String())
	}
	return srv.Serve(ctx, ln)
}
