//go:build !nogui

package main

import (
	"context"
	"flag"
	"io"

	"ember/app"
)

func cmdApp(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := flag.NewFlagSet("app", flag.ContinueOnError)
	modelPath := fs.String("m", "", "model file (GGUF); the bundled model when empty")
	be := fs.String("backend", "auto", "compute backend: auto (CUDA when an NVIDIA GPU is present, else CPU), cpu, cuda or ref")
	data := fs.String("data", "", "data folder for conversations (default: the user's data folder, e.g. ~/.local/share/ember)")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	return app.RunGUI(ctx, app.GUIOptions{ModelPath: *modelPath, Backend: *be, DataDir: *data})
}
