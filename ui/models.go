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

// Starter is what a ChatService whose first model loads once the window is open also
// implements, so that a long first load (a large model read from disk, or a GPU's
// kernels compiled by its driver on a first start) shows as the window's progress bar,
// not as a wait before any window: the UI calls Start on a goroutine of its own as the
// window opens, and the chat waits until it returns (an error shows as a load's does;
// the model menu can then load another).
type Starter interface {
	// Starting names the model Start loads; "" when there is none to load.
	Starting() string
	// Start loads it.
	Start(ctx context.Context) error
}

// LoadStager is what a ModelSwitcher or Starter that can say what its load is doing
// also implements; the status bar shows it while the load runs.
type LoadStager interface {
	// LoadStage is what the load is doing now ("loading the weights, 40%"); "" when
	// it does not say. Called from a goroutine of the UI's own.
	LoadStage() string
}
