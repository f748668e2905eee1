package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"ember/inference/convert"
)

// cmdQuantize converts a model to a llama.cpp quantization mix:
// ember quantize IN.gguf OUT.gguf TYPE [-t THREADS].
func cmdQuantize(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("quantize", flag.ContinueOnError)
	fs.SetOutput(stderr)
	threads := fs.Int("t", 0, "threads (0: one per core)")
	fs.Usage = func() {
		names := make([]string, len(convert.FileTypes))
		for i, ft := range convert.FileTypes {
			names[i] = ft.Name
		}
		fmt.Fprintln(stderr, "usage: ember quantize IN.gguf OUT.gguf TYPE [-t THREADS]")
		fmt.Fprintln(stderr, "Writes IN with its weights in TYPE, one of llama.cpp's mixes, chosen tensor by tensor as")
		fmt.Fprintln(stderr, "llama.cpp's llama-quantize does:", strings.Join(names, ", "))
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return errUsage
	}
	if len(pos) != 3 {
		fmt.Fprintf(stderr, "want IN OUT TYPE, have %d arguments\n", len(pos))
		fs.Usage()
		return errUsage
	}
	ft, err := convert.ParseFileType(pos[2])
	if err != nil {
		return err
	}
	res, err := convert.QuantizeFile(ctx, pos[0], pos[1], convert.Options{
		Type: ft, Threads: *threads, Log: stderr, Terminal: isTerminal(stderr)})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %s (%s): %d tensors, %d converted, %.2f MiB -> %.2f MiB (%.2f bits per weight), %.1fs\n",
		pos[1], ft.Name, res.Tensors, res.Converted, float64(res.InBytes)/(1<<20), float64(res.OutBytes)/(1<<20),
		float64(res.OutBytes)*8/float64(max(res.Elements, 1)), res.Elapsed.Seconds())
	return err
}

// isTerminal reports whether w is a character device (a terminal, not a file or pipe).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// parseInterleaved parses flags that may come before, between or after the positional
// arguments, which it returns.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos, args = append(pos, args[0]), args[1:]
	}
}
