//go:build !nogui

package ui

import "context"

// ModelInfo is a model the user can switch to.
type ModelInfo struct {
	ID     string // the service's key for it
	Name   string
	Detail string // e.g. "llama · Q4_K_M · 808 MB · 131072 ctx · ollama"
}

// ModelSwitcher is what a ChatService that can change its model also
// implements; the status bar then offers the models. The UI calls Models,
// LoadModel and AddModel on goroutines of their own.
type ModelSwitcher interface {
	// Models lists the models to choose from. It may return some with an
	// error about others.
	Models(ctx context.Context) ([]ModelInfo, error)
	// CurrentModel is the ID of the model loaded now.
	CurrentModel() string
	// LoadModel replaces the model; no reply streams meanwhile.
	LoadModel(ctx context.Context, id string) error
	// AddModel makes the model file at path known and returns its ID.
	AddModel(ctx context.Context, path string) (string, error)
}

// RemoteAdder is what a ModelSwitcher that can use models served elsewhere
// (an OpenAI-compatible or Ollama server) also implements.
type RemoteAdder interface {
	// AddRemote checks the server at url and keeps it; its models then show
	// in Models. Slow: called on a goroutine of its own.
	AddRemote(ctx context.Context, url, apiKey string) error
}
