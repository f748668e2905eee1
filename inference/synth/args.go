package synth

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ErrUsage is returned by ParseArgs for a command line it could not use, after it
// printed why and the usage.
var ErrUsage = errors.New("synth: bad command line")

// Config is a parsed command line: where to write, what, and how.
type Config struct {
	Out     string
	Params  Params
	Options Options
}

// boolSet is a flag that stores a fixed value when given (for -tied / -untied).
type boolSet struct {
	p   *bool
	v   bool
	set *bool
}

func (b boolSet) String() string { return "" }
func (b boolSet) Set(s string) error {
	on, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	if on {
		*b.p, *b.set = b.v, true
	}
	return nil
}
func (b boolSet) IsBoolFlag() bool { return true }

// flags registers the script's flags on fs, bound to c's fields, whose current values
// (the preset's) are the defaults: a flag given on the command line overrides them.
func (c *Config) flags(fs *flag.FlagSet, tied, untied *bool) {
	p, o := &c.Params, &c.Options
	fs.String("preset", "", "shape preset: "+strings.Join(PresetNames(), ", ")+"; the flags below override it")
	fs.StringVar(&p.Arch, "arch", p.Arch, "architecture: llama, qwen2 or deepseek2")
	fs.IntVar(&p.NEmbd, "n-embd", p.NEmbd, "embedding width")
	fs.IntVar(&p.NLayer, "n-layer", p.NLayer, "blocks")
	fs.IntVar(&p.NHead, "n-head", p.NHead, "attention heads")
	fs.IntVar(&p.NHeadKV, "n-head-kv", p.NHeadKV, "KV heads (default n-head)")
	fs.IntVar(&p.HeadDim, "head-dim", p.HeadDim, "head size (default n-embd / n-head)")
	fs.IntVar(&p.NFF, "n-ff", p.NFF, "FFN width")
	fs.IntVar(&p.NVocab, "n-vocab", p.NVocab, "vocabulary size (>= 260)")
	fs.IntVar(&p.Ctx, "ctx", p.Ctx, "context_length metadata (trained context)")
	fs.Float64Var(&p.RopeTheta, "rope-theta", p.RopeTheta, "RoPE base")
	fs.Float64Var(&p.RMSEps, "rms-eps", p.RMSEps, "RMSNorm epsilon")
	fs.Var(boolSet{&p.Tied, true, tied}, "tied", "no output.weight (the output reuses token_embd)")
	fs.Var(boolSet{&p.Tied, false, untied}, "untied", "write output.weight")
	fs.StringVar(&p.Name, "name", p.Name, "general.name")
	fs.StringVar(&p.Desc, "description", p.Desc, "general.description")
	fs.StringVar(&p.ChatTemplate, "chat-template", p.ChatTemplate, "tokenizer.chat_template (Jinja), optional")
	fs.StringVar(&o.FileType, "ftype", o.FileType, "weight types: "+strings.Join(FileTypes(), ", ")+
		" (llama.cpp's mixes; q4_k: every matrix Q4_K, output Q6_K)")
	fs.StringVar(&o.Seed, "seed", o.Seed, "seed of the random stream (equal seeds give equal files)")
	fs.IntVar(&o.GainLog2, "gain-log2", o.GainLog2, "scale all random weights by 2^K")
	fs.IntVar(&o.Alignment, "alignment", o.Alignment, "tensor data alignment (a power of two)")
	fs.IntVar(&o.Threads, "t", o.Threads, "threads making random blocks (0: one per core)")
	// deepseek2 (MLA + MoE); defaults: DeepSeek-V2-Lite's values
	fs.IntVar(&p.NLayerDense, "n-layer-dense", p.NLayerDense, "deepseek2: leading layers with a dense FFN (n-ff)")
	fs.IntVar(&p.NExpert, "n-expert", p.NExpert, "deepseek2: routed experts")
	fs.IntVar(&p.NExpertUsed, "n-expert-used", p.NExpertUsed, "deepseek2: routed experts per token")
	fs.IntVar(&p.NExpertShared, "n-expert-shared", p.NExpertShared, "deepseek2: shared experts (one FFN of n-ff-exp * count)")
	fs.IntVar(&p.NFFExp, "n-ff-exp", p.NFFExp, "deepseek2: expert FFN width")
	fs.IntVar(&p.QLoraRank, "q-lora-rank", p.QLoraRank, "deepseek2: 0 = no q compression (attn_q), as V2-Lite")
	fs.IntVar(&p.KVLoraRank, "kv-lora-rank", p.KVLoraRank, "deepseek2: KV latent size")
	fs.IntVar(&p.QKNope, "qk-nope-dim", p.QKNope, "deepseek2: query/key dims without RoPE")
	fs.IntVar(&p.QKRope, "qk-rope-dim", p.QKRope, "deepseek2: query/key dims with RoPE")
	fs.IntVar(&p.VHeadDim, "v-head-dim", p.VHeadDim, "deepseek2: value head size")
	fs.StringVar(&p.RopeScaling, "rope-scaling", p.RopeScaling, "deepseek2: none or yarn")
	fs.Float64Var(&p.YarnFactor, "yarn-factor", p.YarnFactor, "deepseek2: YaRN factor")
	fs.IntVar(&p.YarnOrigCtx, "yarn-orig-ctx", p.YarnOrigCtx, "deepseek2: YaRN original context")
	fs.Float64Var(&p.YarnMScaleAllDim, "yarn-mscale-all-dim", p.YarnMScaleAllDim, "deepseek2: HF rope_scaling.mscale_all_dim")
	fs.StringVar(&p.ExpertGating, "expert-gating", p.ExpertGating, "deepseek2: softmax or sigmoid")
	fs.Float64Var(&p.ExpertWeightsScale, "expert-weights-scale", p.ExpertWeightsScale, "deepseek2: routed expert weight scale")
	fs.BoolVar(&p.ExpertWeightsNorm, "expert-weights-norm", p.ExpertWeightsNorm, "deepseek2: renormalize the selected experts' weights to sum 1 (V3)")
	fs.IntVar(&p.ExpertGroups, "expert-groups", p.ExpertGroups, "deepseek2: expert groups (V3: 8)")
	fs.IntVar(&p.ExpertGroupsUsed, "expert-groups-used", p.ExpertGroupsUsed, "deepseek2: groups kept per token (V3: 4)")
	fs.BoolVar(&p.ExpProbsB, "exp-probs-b", p.ExpProbsB, "deepseek2: write blk.N.exp_probs_b.bias (V3's expert selection bias)")
	fs.StringVar(&p.MLALayout, "mla-layout", p.MLALayout, "deepseek2: split (attn_k_b + attn_v_b) or kv_b (older attn_kv_b files)")
}

// ParseArgs parses `ember synth` arguments: OUT.gguf and flags, in any order (-flag and
// --flag both work). A preset (or the defaults) is applied first; the other flags
// override it. Usage and flag errors go to usage; -h gives flag.ErrHelp, a bad command
// line ErrUsage, an unknown preset its own error.
func ParseArgs(args []string, usage io.Writer) (Config, error) {
	// First pass: find -preset and -arch, which choose the defaults of everything else.
	var scratch Config
	pre := flag.NewFlagSet("synth", flag.ContinueOnError)
	pre.SetOutput(io.Discard)
	var t1, t2 bool
	scratch.flags(pre, &t1, &t2)
	if _, err := parseInterleaved(pre, args); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(usage, err)
		return Config{}, ErrUsage
	}
	var c Config
	var err error
	if c.Params, err = Base(pre.Lookup("preset").Value.String(), pre.Lookup("arch").Value.String()); err != nil {
		return Config{}, err
	}
	c.Options = Options{FileType: "q4_k_m", Seed: "0", Alignment: 32}
	fs := flag.NewFlagSet("synth", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.Usage = func() {
		fmt.Fprintln(usage, "usage: ember synth OUT.gguf [-preset NAME] [-ftype q4_k_m] [flags]")
		fmt.Fprintln(usage, "Writes a model with real shapes and random (valid) weights, for benchmarks and tests.")
		fs.PrintDefaults()
	}
	var tied, untied bool
	c.flags(fs, &tied, &untied)
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return Config{}, err
	}
	if err != nil {
		return Config{}, ErrUsage // the flag package printed it
	}
	if tied && untied {
		fmt.Fprintln(usage, "-tied and -untied exclude each other")
		return Config{}, ErrUsage
	}
	if len(pos) != 1 {
		fmt.Fprintf(usage, "want one output file, have %d arguments %q\n", len(pos), pos)
		fs.Usage()
		return Config{}, ErrUsage
	}
	c.Out = pos[0]
	return c, nil
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
		pos = append(pos, args[0])
		args = args[1:]
	}
}
