package prompt

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime/metrics"
	"strings"
	"time"

	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// Names the sandbox adds to a template. Templates may not mention internalPrefix at all
// (checkSource), so they can neither call nor shadow these.
const (
	internalPrefix = "__ember"
	guardKey       = "__ember_guard" // the render's *guard, in the root context
	chkFunc        = "__ember_chk"   // __ember_chk(v): checks v's size, returns v
	outFunc        = "__ember_out"   // __ember_out(v): __ember_chk(v) that counts v as printed
	mulFunc        = "__ember_mul"   // __ember_mul(a, b): a * b with a size check first
	powFunc        = "__ember_pow"   // __ember_pow(a, b): a ** b, integer when both are
)

// guard holds one render's limits and counters. A render runs on one goroutine, so no
// field needs a lock.
type guard struct {
	ctx, parent context.Context // parent: the caller's context, to tell its end from our timeout
	maxOutput   int
	maxSteps    int
	maxDepth    int
	maxAlloc    uint64

	now          time.Time // strftime_now's clock; zero: time.Now()
	steps, depth int
	checks       int              // calls of check, to space out meter readings
	unmetered    int              // bytes of values checked since the meter was last read
	printed      int              // bytes of expressions printed, into the output or a macro's buffer
	alloc0       uint64           // heap bytes allocated by the process when the render began
	sample       []metrics.Sample // /gc/heap/allocs:bytes
	err          error            // the first limit broken or exception raised; sticky
}

func newGuard(ctx, parent context.Context, opt Options) *guard {
	g := &guard{
		ctx: ctx, parent: parent,
		maxOutput: opt.MaxOutput, maxSteps: opt.MaxSteps, maxDepth: opt.MaxDepth, now: opt.Now,
		sample: []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}},
	}
	if opt.MaxAlloc > 0 {
		g.maxAlloc = uint64(opt.MaxAlloc)
	} else {
		g.maxAlloc = DefaultMaxAlloc
	}
	if g.maxOutput <= 0 {
		g.maxOutput = DefaultMaxOutput
	}
	if g.maxSteps <= 0 {
		g.maxSteps = DefaultMaxSteps
	}
	if g.maxDepth <= 0 {
		g.maxDepth = DefaultMaxDepth
	}
	g.alloc0 = g.allocated()
	return g
}

func (g *guard) allocated() uint64 {
	metrics.Read(g.sample)
	if g.sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return g.sample[0].Value.Uint64()
}

// fail records err as the render's error unless one is recorded already, and returns the
// recorded one.
func (g *guard) fail(err error) error {
	if g.err == nil {
		g.err = err
	}
	return g.err
}

func (g *guard) limit(format string, args ...any) error {
	return g.fail(fmt.Errorf("prompt: %s: %w", fmt.Sprintf(format, args...), ErrLimit))
}

// check tests the context and the allocation meter.
func (g *guard) check() error {
	if g.err != nil {
		return g.err
	}
	if err := g.ctx.Err(); err != nil {
		if g.parent.Err() == nil { // our Options.Timeout, not the caller's context
			return g.fail(fmt.Errorf("prompt: render took too long: %w (%w)", err, ErrLimit))
		}
		return g.fail(fmt.Errorf("prompt: render stopped: %w", err))
	}
	// Reading the meter can cost tens of microseconds when other goroutines allocate
	// (it waits for a consistent view of every P's counters), so it is read every
	// meterEvery checks, or sooner once the values checked since add up to a MiB.
	if g.checks++; g.checks%meterEvery != 0 && g.unmetered < 1<<20 {
		return nil
	}
	g.unmetered = 0
	if a := g.allocated() - g.alloc0; a > g.maxAlloc {
		return g.limit("render allocated %d bytes, more than %d", a, g.maxAlloc)
	}
	return nil
}

// meterEvery is how many checks pass between readings of the allocation meter.
const meterEvery = 64

// tick counts one step (a loop iteration).
func (g *guard) tick() error {
	g.steps++
	if g.steps > g.maxSteps {
		return g.limit("more than %d loop iterations and macro calls", g.maxSteps)
	}
	return g.check()
}

// enter counts a step into a macro or call-block body, one level deeper.
func (g *guard) enter() error {
	g.depth++
	if g.depth > g.maxDepth {
		return g.limit("macro calls nested deeper than %d", g.maxDepth)
	}
	return g.tick()
}

func (g *guard) exit() { g.depth-- }

// checkValue fails when v is bigger than maxOutput or nested deeper than maxNesting.
func (g *guard) checkValue(v any) error {
	n, err := measure(reflect.ValueOf(v), g.maxOutput, 0)
	if err == errTooBig {
		return g.limit("value bigger than %d bytes", g.maxOutput)
	}
	if err != nil {
		return g.fail(fmt.Errorf("prompt: %w: %w", err, ErrLimit))
	}
	g.unmetered += n
	return g.check()
}

// valueCost is what measure charges for each value besides its string bytes: about what
// the engine spends on one (an interface, a reflect.Value, a boxed *exec.Value).
const valueCost = 32

// measure returns an estimate of v's size in bytes (string bytes plus valueCost per
// value), failing as soon as it passes budget or the nesting passes maxNesting.
func measure(v reflect.Value, budget, depth int) (int, error) {
	if depth > maxNesting {
		return 0, errTooDeep
	}
	for v.IsValid() && (v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer) {
		if v.IsNil() {
			return valueCost, nil
		}
		if ev, ok := v.Interface().(*exec.Value); ok {
			v = ev.Val
			continue
		}
		v = v.Elem()
	}
	if !v.IsValid() {
		return valueCost, nil
	}
	n := valueCost
	add := func(x reflect.Value) error {
		m, err := measure(x, budget-n, depth+1)
		n += m
		if err == nil && n > budget {
			err = errTooBig
		}
		return err
	}
	switch v.Kind() {
	case reflect.String:
		n += v.Len()
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if err := add(v.Index(i)); err != nil {
				return n, err
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if err := add(it.Key()); err != nil {
				return n, err
			}
			if err := add(it.Value()); err != nil {
				return n, err
			}
		}
	case reflect.Struct:
		if v.Type() == exec.TypeDict && v.CanInterface() {
			d := v.Interface().(exec.Dict)
			for _, p := range d.Pairs {
				if err := add(reflect.ValueOf(p.Key)); err != nil {
					return n, err
				}
				if err := add(reflect.ValueOf(p.Value)); err != nil {
					return n, err
				}
			}
		}
	}
	if n > budget {
		return n, errTooBig
	}
	return n, nil
}

var (
	errTooBig  = errors.New("value too big")
	errTooDeep = fmt.Errorf("value nested deeper than %d", maxNesting)
)

// guardFrom finds the render's guard from any context of the render (macros inherit it).
func guardFrom(ctx *exec.Context) *guard {
	if ctx != nil {
		if x, ok := ctx.Get(guardKey); ok {
			if g, ok := x.(*guard); ok {
				return g
			}
		}
	}
	return nil
}

var errNoGuard = fmt.Errorf("prompt: template run outside a guarded render: %w", ErrLimit)

// limitWriter is the render's output, bounded by maxOutput.
type limitWriter struct {
	g *guard
	b strings.Builder
}

func (w *limitWriter) Write(p []byte) (int, error) {
	if w.b.Len()+len(p) > w.g.maxOutput {
		return 0, w.g.limit("output bigger than %d bytes", w.g.maxOutput)
	}
	w.g.unmetered += len(p)
	if err := w.g.check(); err != nil {
		return 0, err
	}
	return w.b.Write(p)
}

// guardOp is what a guardNode does when it runs.
type guardOp int

const (
	opTick  guardOp = iota // a loop iteration
	opEnter                // the start of a macro or call-block body
	opExit                 // its end
)

// guardNode is a statement the sandbox inserts at the start of loop bodies and around
// macro and call-block bodies; it renders nothing.
type guardNode struct {
	op  guardOp
	loc *tokens.Token
}

func (n *guardNode) Position() *tokens.Token { return n.loc }
func (n *guardNode) String() string          { return "guard" }

func (n *guardNode) Execute(r *exec.Renderer, _ *nodes.ControlStructureBlock) error {
	g := guardFrom(r.Environment.Context)
	if g == nil {
		return errNoGuard
	}
	switch n.op {
	case opEnter:
		return g.enter()
	case opExit:
		g.exit()
		return nil
	}
	return g.tick()
}

func newGuardBlock(op guardOp, loc *tokens.Token) nodes.Node {
	return &nodes.ControlStructureBlock{Location: loc, Name: "guard", ControlStructure: &guardNode{op: op, loc: loc}}
}

// guardChk implements __ember_chk.
func guardChk(e *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	g := guardFrom(e.Environment.Context)
	if g == nil {
		return exec.AsValue(errNoGuard)
	}
	if len(va.Args) != 1 {
		return exec.AsValue(fmt.Errorf("%s takes one argument", chkFunc))
	}
	if err := g.checkValue(va.Args[0]); err != nil {
		return exec.AsValue(err)
	}
	return va.Args[0]
}

// maxPrinted bounds the bytes printed into all buffers (the output, macro results, block
// sets), as a multiple of maxOutput: a macro's result is printed again by its caller.
const maxPrinted = 8

// guardOut implements __ember_out.
func guardOut(e *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	v := guardChk(e, va)
	if v.IsError() {
		return v
	}
	g := guardFrom(e.Environment.Context)
	if s, ok := v.Interface().(string); ok {
		g.printed += len(s)
	}
	if g.printed > maxPrinted*g.maxOutput {
		return exec.AsValue(g.limit("printed more than %d bytes", maxPrinted*g.maxOutput))
	}
	return v
}

// guardMul implements __ember_mul: Python's *, with repetition sized before it allocates.
func guardMul(e *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	g := guardFrom(e.Environment.Context)
	if g == nil {
		return exec.AsValue(errNoGuard)
	}
	if len(va.Args) != 2 {
		return exec.AsValue(fmt.Errorf("%s takes two arguments", mulFunc))
	}
	a, b := va.Args[0], va.Args[1]
	if a.IsInteger() && (b.IsString() || b.IsList()) {
		a, b = b, a
	}
	var out *exec.Value
	switch {
	case (a.IsString() || a.IsList()) && b.IsInteger():
		count := max(b.Integer(), 0)
		size, err := measure(reflect.ValueOf(a.Interface()), g.maxOutput, 0)
		if err != nil || count > 0 && (size > g.maxOutput/count || a.Len() > maxRange/count) {
			return exec.AsValue(g.limit("repetition bigger than %d bytes", g.maxOutput))
		}
		if a.IsString() {
			out = exec.AsValue(strings.Repeat(a.String(), count))
		} else {
			items := make([]any, 0, a.Len()*count)
			for range count {
				for i := 0; i < a.Len(); i++ {
					items = append(items, a.Index(i).Interface())
				}
			}
			out = exec.AsValue(items)
		}
	case a.IsFloat() || b.IsFloat():
		out = exec.AsValue(a.Float() * b.Float())
	case a.IsInteger() && b.IsInteger():
		out = exec.AsValue(a.Integer() * b.Integer())
	default:
		return exec.AsValue(fmt.Errorf("unsupported operands for *: %s and %s", a, b))
	}
	if err := g.check(); err != nil {
		return exec.AsValue(err)
	}
	return out
}

// guardPow implements __ember_pow: Python's **, which stays an integer for integers (gonja
// makes every power a float, so 'a' * 10**12 would slip past the repetition check).
func guardPow(e *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	g := guardFrom(e.Environment.Context)
	if g == nil {
		return exec.AsValue(errNoGuard)
	}
	if len(va.Args) != 2 {
		return exec.AsValue(fmt.Errorf("%s takes two arguments", powFunc))
	}
	a, b := va.Args[0], va.Args[1]
	if !a.IsInteger() || !b.IsInteger() || b.Integer() < 0 {
		return exec.AsValue(math.Pow(a.Float(), b.Float()))
	}
	r, ok := intPow(int64(a.Integer()), int64(b.Integer()))
	if !ok {
		return exec.AsValue(g.limit("%d ** %d does not fit in 64 bits", a.Integer(), b.Integer()))
	}
	return exec.AsValue(int(r))
}

// intPow is base**exp for exp >= 0, and whether it fits in an int64. Bases 0, 1 and -1
// are answered at once; for any other base the result overflows within 63 steps.
func intPow(base, exp int64) (int64, bool) {
	switch {
	case exp == 0 || base == 1:
		return 1, true
	case base == 0:
		return 0, true
	case base == -1:
		return 1 - 2*(exp&1), true
	}
	r := int64(1)
	for ; exp > 0; exp-- {
		if base != 0 && (r > math.MaxInt64/abs(base) || r < -math.MaxInt64/abs(base)) {
			return 0, false
		}
		r *= base
	}
	return r, true
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
