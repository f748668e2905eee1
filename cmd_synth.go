package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"ember/inference/synth"
)

// cmdSynth writes a synthetic model: ember synth OUT.gguf [-preset NAME] [-ftype q4_k_m]
// [flags] (see synth.ParseArgs for the flags, tools/synth_gguf.py's).
func cmdSynth(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := synth.ParseArgs(args, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return nil
	case errors.Is(err, synth.ErrUsage):
		return errUsage
	case err != nil:
		return err
	}
	s, err := synth.Write(ctx, c.Out, c.Params, c.Options)
	if err != nil {
		return err
	}
	var mix []string
	for t, n := range s.ByType {
		mix = append(mix, fmt.Sprintf("%s %.1f%%", t, 100*float64(n)/float64(s.Params)))
	}
	sort.Strings(mix)
	_, err = fmt.Fprintf(stdout, "wrote %s: %d tensors, %.3fB params, %.1f MiB (%.2f bpw), %.1fs  [%s]\n",
		c.Out, s.Tensors, float64(s.Params)/1e9, float64(s.Bytes)/(1<<20), float64(s.Bytes)*8/float64(s.Params),
		s.Elapsed.Seconds(), strings.Join(mix, ", "))
	return err
}
