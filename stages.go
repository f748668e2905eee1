package main

import (
	"fmt"
	"io"
)

// terminalStages is an app.BackendOptions.Stage for the commands that load a model
// (run, serve): on a terminal, each stage of the load ("starting the GPU", "loading
// the weights, 40%") drawn over the last on one line of w, and the line cleared when
// the load ends (stage ""); nil when w is a file or pipe, which logs stay clean of.
func terminalStages(w io.Writer) func(string) {
	if !isTerminal(w) {
		return nil
	}
	return drawStages(w)
}

// drawStages draws each stage over the last on one line of w, clearing it on "".
func drawStages(w io.Writer) func(string) {
	return func(stage string) {
		if stage == "" {
			fmt.Fprint(w, "\r\x1b[K")
			return
		}
		fmt.Fprintf(w, "\r\x1b[Kember: %s…", stage)
	}
}
