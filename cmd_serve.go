package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"ember/app"
	"ember/app/server"
)

// listFlag is a comma-separated, repeatable flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var o app.ServeOptions
	fs.StringVar(&o.ModelPath, "m", "", "model file (GGUF); the bundled model when empty")
	fs.StringVar(&o.Addr, "addr", server.DefaultAddr, "listen address (loopback by default)")
	fs.StringVar(&o.APIKey, "api-key", "", "require 'Authorization: Bearer KEY' on every route but /health")
	var hosts, origins listFlag
	fs.Var(&hosts, "allow-host", "extra Host header names to accept (comma-separated; repeatable)")
	fs.Var(&origins, "allow-origin", "browser origins allowed to call the API (CORS), e.g. http://localhost:*")
	fs.IntVar(&o.ContextSize, "c", 0, "context size per sequence (0: the model's, at most 4096)")
	fs.IntVar(&o.ContextSize, "ctx", 0, "same as -c")
	fs.IntVar(&o.Parallel, "parallel", 4, "sequences generated at once (continuous batching)")
	fs.IntVar(&o.Lookup, "lookup", 0, "speculative decoding by prompt lookup: at most this many draft tokens a step (0: off)")
	fs.StringVar(&o.DataDir, "data", "", "data folder for the persistent prefix cache (default: the user's data folder, e.g. ~/.local/share/ember)")
	diskGiB := fs.Float64("kv-disk", 4, "size cap of the persistent prefix cache in GiB (0 turns it off)")
	fs.IntVar(&o.CacheTokens, "kv-cache", 0, "KV-cache size in positions, shared by all sequences and the prefix cache (0: context x min(parallel, 2))")
	fs.StringVar(&o.KVType, "kv-type", "f16", "KV-cache type: f16, or q8_0 (half the memory; CPU backend)")
	fs.StringVar(&o.Backend.Name, "backend", "auto", "compute backend: auto (CUDA when an NVIDIA GPU is present, else CPU), cpu, cuda or ref")
	fs.IntVar(&o.Backend.Threads, "t", 0, "CPU threads (0: one per core)")
	ngl := fs.Int("ngl", -1, app.NGLUsage)
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if o.Lookup < 0 {
		return errors.New("-lookup must not be negative")
	}
	o.Backend.NGL(*ngl)
	o.Backend.Stage = terminalStages(stderr)
	o.AllowedHosts, o.AllowedOrigins = hosts, origins
	o.Ready = func(addr string) {
		fmt.Fprintf(stdout, "ember: serving the OpenAI API at http://%s/v1 and the Ollama API at http://%s/api\n", addr, addr)
	}
	o.DiskCacheBytes = int64(*diskGiB * (1 << 30))
	if o.DataDir == "" && o.DiskCacheBytes > 0 {
		dir, err := app.DefaultDataDir()
		if err != nil {
			return err
		}
		o.DataDir = dir
	}
	return app.Serve(ctx, o)
}
