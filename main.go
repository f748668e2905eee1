// Command ember is a desktop app for chatting with large language models on your own
// machine, and the command-line tools around its inference engine.
//
//	ember                 open the app (the bundled model when none is chosen)
//	ember run -m M -p P   stream a completion
//	ember logits ...      print logits as JSON (for checks against llama.cpp)
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"app", "open the desktop app (the default)", cmdApp},
		{"run", "stream a completion: ember run -m MODEL.gguf -p TEXT [-n N] [-temp T] [-seed S]", cmdRun},
		{"logits", "print logits as JSON: ember logits -m MODEL.gguf -tokens 1,2,3 [-all] [-greedy N]", cmdLogits},
		{"serve", "serve the OpenAI- and Ollama-compatible API: ember serve -m MODEL [-addr 127.0.0.1:11435] [-api-key K]", cmdServe},
		{"bench", "measure speed: ember bench -m MODEL [-p 512] [-n 128] [-t THREADS] [-r 3] [-json]", cmdBench},
		{"quantize", "convert a model: ember quantize IN.gguf OUT.gguf TYPE (Q8_0, Q4_0, Q4_K_M, Q5_K_M, Q6_K, ...)", cmdQuantize},
		{"synth", "write a synthetic model of real shapes: ember synth OUT.gguf -preset llama3.2-1b -ftype q4_k_m", cmdSynth},
		{"tokenize", "print the token ids of stdin as JSON: ember tokenize -m MODEL [-special] [-bos]", cmdTokenize},
		{"detokenize", "print the text of a JSON array of token ids on stdin: ember detokenize -m MODEL", cmdDetokenize},
		{"version", "print the version", func(_ context.Context, _ []string, out, _ io.Writer) error {
			_, err := fmt.Fprintln(out, "ember", version)
			return err
		}},
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: ember [command] [flags]   (no command opens the app)")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'ember COMMAND -h' for a command's flags.")
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// runMain dispatches to a subcommand and returns the process exit code.
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	name := "app"
	if len(args) > 0 {
		name, args = args[0], args[1:]
	}
	if name == "help" || name == "-h" || name == "--help" {
		usage(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name == name {
			if err := c.run(ctx, args, stdout, stderr); err != nil {
				if err == errUsage {
					return 2
				}
				fmt.Fprintln(stderr, "ember:", err)
				return 1
			}
			return 0
		}
	}
	fmt.Fprintf(stderr, "ember: unknown command %q\n", name)
	usage(stderr)
	return 2
}
