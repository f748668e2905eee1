// Package assets holds what Ember ships inside its binary: the bundled default model
// (stories260K, a tiny real Llama trained on TinyStories; MIT, see SOURCES.md), so the app
// does something real on a fresh machine with no model downloaded.
package assets

import _ "embed"

// DefaultModelName names the bundled model.
const DefaultModelName = "stories260K"

//go:embed stories260K.gguf
var defaultModel []byte

// DefaultModel returns the bundled GGUF file's bytes. Callers must not modify them.
func DefaultModel() []byte { return defaultModel }

//go:embed icon.png
var icon []byte

// Icon returns the app icon, a 256x256 PNG.
func Icon() []byte { return icon }
