package synth

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
)

func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		check func(c Config) bool
	}{
		{"preset defaults", []string{"o.gguf", "-preset", "llama3.2-1b"}, func(c Config) bool {
			p := c.Params
			return c.Out == "o.gguf" && p.NEmbd == 2048 && p.NLayer == 16 && p.NHeadKV == 8 && p.Tied &&
				p.RopeTheta == 500000 && c.Options.FileType == "q4_k_m" && c.Options.Seed == "0" && c.Options.Alignment == 32
		}},
		{"flags override the preset, in any order, -- or -", []string{"--n-layer", "4", "o.gguf", "--preset", "llama3.2-1b", "-untied", "--ftype", "q8_0", "-seed", "x"},
			func(c Config) bool {
				p := c.Params
				return p.NLayer == 4 && p.NEmbd == 2048 && !p.Tied && c.Options.FileType == "q8_0" && c.Options.Seed == "x"
			}},
		{"8B by flags", strings.Fields("o.gguf --arch llama --n-embd 4096 --n-layer 32 --n-head 32 --n-head-kv 8 --n-ff 14336 --n-vocab 128256 --rope-theta 500000"),
			func(c Config) bool {
				p, q := c.Params, preset(t, "llama3.1-8b")
				q.Name, q.Ctx = "synthetic", 4096
				p.Desc, q.Desc = "", ""
				return p == q
			}},
		{"deepseek2 defaults from -arch", []string{"o.gguf", "-arch", "deepseek2", "-n-expert", "16", "-mla-layout", "kv_b"}, func(c Config) bool {
			p := c.Params
			return p.Arch == "deepseek2" && p.NExpert == 16 && p.NExpertUsed == 6 && p.KVLoraRank == 512 &&
				p.MLALayout == "kv_b" && p.RopeScaling == "yarn" && p.NEmbd == 0
		}},
		{"tiny-deepseek2 overrides", []string{"o.gguf", "-preset", "tiny-deepseek2", "-tied", "-q-lora-rank", "32", "-expert-weights-norm", "-exp-probs-b", "-gain-log2", "4"},
			func(c Config) bool {
				p := c.Params
				return p.Tied && p.QLoraRank == 32 && p.ExpertWeightsNorm && p.ExpProbsB && p.NExpert == 8 && c.Options.GainLog2 == 4
			}},
		{"names", []string{"o.gguf", "-preset", "tiny", "-name", "n", "-description", "d", "-chat-template", "{{x}}", "-t", "3"},
			func(c Config) bool {
				return c.Params.Name == "n" && c.Params.Desc == "d" && c.Params.ChatTemplate == "{{x}}" && c.Options.Threads == 3
			}},
	} {
		var usage bytes.Buffer
		c, err := ParseArgs(tc.args, &usage)
		if err != nil {
			t.Errorf("%s: %v\n%s", tc.name, err, usage.String())
			continue
		}
		if !tc.check(c) {
			t.Errorf("%s: got %+v %+v", tc.name, c.Params, c.Options)
		}
	}
}

func TestParseArgsErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want error
		text string
	}{
		{[]string{}, ErrUsage, "want one output file"},
		{[]string{"a.gguf", "b.gguf"}, ErrUsage, "want one output file"},
		{[]string{"a.gguf", "-nope"}, ErrUsage, "not defined"},
		{[]string{"a.gguf", "-n-layer", "x"}, ErrUsage, "invalid value"},
		{[]string{"a.gguf", "-tied", "-untied"}, ErrUsage, "exclude each other"},
		{[]string{"a.gguf", "-h"}, flag.ErrHelp, "-preset"},
		{[]string{"a.gguf", "-preset", "huge"}, nil, "unknown preset"},
	} {
		var usage bytes.Buffer
		_, err := ParseArgs(tc.args, &usage)
		if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) ||
			!strings.Contains(err.Error()+usage.String(), tc.text) {
			t.Errorf("%q: error %v, output %q; want %v with %q", tc.args, err, usage.String(), tc.want, tc.text)
		}
	}
}

// TestCheckErrors: hyperparameters llama.cpp could not load are refused.
func TestCheckErrors(t *testing.T) {
	for _, tc := range []struct {
		edit func(p *Params)
		want string
	}{
		{func(p *Params) { p.NEmbd = 0 }, "missing hyperparameters"},
		{func(p *Params) { p.NVocab = 259 }, ">= 260"},
		{func(p *Params) { p.NHead = 3 }, "give -head-dim"},
		{func(p *Params) { p.NHeadKV = 3 }, "multiple of n-head-kv"},
		{func(p *Params) { p.Arch = "gpt2" }, "unknown architecture"},
		{func(p *Params) { p.Arch = "deepseek2"; deepseek2Defaults(p); p.QKRope = 3 }, "even qk-rope-dim"},
		{func(p *Params) { p.Arch = "deepseek2"; deepseek2Defaults(p); p.NExpertUsed = 99 }, "n-expert-used"},
		{func(p *Params) { p.Arch = "deepseek2"; deepseek2Defaults(p); p.NLayerDense = 9 }, "n-layer-dense"},
		{func(p *Params) { p.Arch = "deepseek2"; deepseek2Defaults(p); p.ExpertGroups = 3 }, "expert groups"},
		{func(p *Params) { p.Arch = "deepseek2"; deepseek2Defaults(p); p.MLALayout = "x" }, "MLA layout"},
	} {
		p := preset(t, "tiny")
		tc.edit(&p)
		var b bytes.Buffer
		_, err := WriteTo(t.Context(), &b, p, Options{FileType: "f16"})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
	for _, opt := range []Options{{FileType: "q9_k"}, {FileType: "q8_0", Alignment: 24}, {FileType: "iq2_xxs"}} {
		var b bytes.Buffer
		if _, err := WriteTo(t.Context(), &b, preset(t, "tiny"), opt); err == nil {
			t.Errorf("%+v accepted", opt)
		}
	}
	// A row length no Q8_0 block fits: llama.cpp's quantizer refuses it too.
	p := preset(t, "tiny")
	p.NFF = 100
	var b bytes.Buffer
	if _, err := WriteTo(t.Context(), &b, p, Options{FileType: "q8_0"}); err == nil || !strings.Contains(err.Error(), "ffn_down") {
		t.Errorf("n_ff 100 in Q8_0: %v", err)
	}
}
