package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"ember/inference/gguf"
	"ember/inference/tokenizer"
)

// stdin is what tokenize and detokenize read; tests replace it.
var stdin io.Reader = os.Stdin

// cmdTokenize is `ember tokenize -m MODEL [-special] [-bos]`: all of stdin, as one text,
// becomes a JSON array of token ids on stdout.
func cmdTokenize(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tokenize", flag.ContinueOnError)
	modelPath := fs.String("m", "", "model or vocabulary file (GGUF)")
	special := fs.Bool("special", false, `recognise the text of special tokens ("<s>", "<|im_start|>", ...)`)
	bos := fs.Bool("bos", false, "add BOS (and EOS) as the file's add_bos_token/add_eos_token say")
	tok, done, err := openTokenizer(fs, args, modelPath, stderr)
	if done || err != nil {
		return err
	}
	text, err := io.ReadAll(stdin)
	if err != nil {
		return fmt.Errorf("tokenize: reading stdin: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	ids := tok.Encode(string(text), tokenizer.EncodeOptions{AddSpecial: *bos, ParseSpecial: *special})
	if ids == nil {
		ids = []int32{} // [] rather than null
	}
	out, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", out)
	return err
}

// cmdDetokenize is `ember detokenize -m MODEL`: a JSON array of token ids on stdin
// becomes their text on stdout, exactly (no newline is added), so that tokenize and
// detokenize round-trip.
func cmdDetokenize(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("detokenize", flag.ContinueOnError)
	modelPath := fs.String("m", "", "model or vocabulary file (GGUF)")
	tok, done, err := openTokenizer(fs, args, modelPath, stderr)
	if done || err != nil {
		return err
	}
	ids, err := readIDs(stdin, tok.VocabSize())
	if err != nil {
		return fmt.Errorf("detokenize: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	_, err = io.WriteString(stdout, tok.Decode(ids))
	return err
}

// openTokenizer parses the flags and loads the tokenizer of the -m file. done is true
// when -h printed the flags and there is nothing else to do.
func openTokenizer(fs *flag.FlagSet, args []string, modelPath *string, stderr io.Writer) (tok *tokenizer.Tokenizer, done bool, err error) {
	if err := parseFlags(fs, args, stderr); err != nil {
		return nil, false, err
	}
	if slices.ContainsFunc(args, func(a string) bool { return a == "-h" || a == "-help" || a == "--help" }) {
		return nil, true, nil // parseFlags printed the flags
	}
	if *modelPath == "" {
		return nil, false, fmt.Errorf("%s: -m MODEL.gguf is required", fs.Name())
	}
	f, err := gguf.Open(*modelPath)
	if err != nil {
		return nil, false, oneLine(fmt.Errorf("%s: %w", fs.Name(), err))
	}
	defer f.Close() // the tokenizer keeps copies of what it needs
	tok, err = tokenizer.FromGGUF(f)
	if err != nil {
		return nil, false, oneLine(fmt.Errorf("%s: %s: %w", fs.Name(), *modelPath, err))
	}
	return tok, false, nil
}

// readIDs decodes one JSON array of token ids below vocab, and nothing after it.
func readIDs(r io.Reader, vocab int) ([]int32, error) {
	dec := json.NewDecoder(r)
	var raw []int64
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("stdin is empty; want a JSON array of token ids")
		}
		return nil, oneLine(fmt.Errorf("stdin is not a JSON array of token ids: %w", err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("stdin has more after the JSON array of token ids")
	}
	ids := make([]int32, len(raw))
	for i, v := range raw {
		if v < 0 || v >= int64(vocab) {
			return nil, fmt.Errorf("token %d: %d is not a token id (the vocabulary has %d)", i, v, vocab)
		}
		ids[i] = int32(v)
	}
	return ids, nil
}

// oneLine keeps an error on one line, as the command's error is printed as one.
func oneLine(err error) error {
	if !strings.ContainsAny(err.Error(), "\r\n") {
		return err
	}
	return errors.New(strings.Join(strings.Fields(err.Error()), " "))
}
