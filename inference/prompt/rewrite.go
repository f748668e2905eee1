package prompt

import (
	"fmt"

	controlStructures "github.com/nikolalohinski/gonja/v2/builtins/control_structures"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// rewriter puts the sandbox's guards into a parsed template, in place:
//
//   - a tick at the start of every loop body, enter/exit around macro and call-block
//     bodies (guardNode);
//   - a * b becomes __ember_mul(a, b), which sizes a repetition before making it, and
//     a ** b __ember_pow(a, b), which keeps integers integers as Python does; a // b
//     and a % b __ember_floordiv(a, b) and __ember_mod(a, b), Python's (arith.go);
//   - the results of calls, filters, + and ~ pass through __ember_chk, which checks their
//     size, the allocation meter and the context; printed expressions through
//     __ember_out, which also counts the bytes printed into any buffer.
//
// Anything it does not know (a node type a newer gonja might add) fails the parse, so no
// part of a template escapes the guards.
type rewriter struct {
	memo map[nodes.Node]nodes.Expression // rewritten expressions: a node shared by two parents is done once
}

func (rw *rewriter) block(ns []nodes.Node) ([]nodes.Node, error) {
	for _, n := range ns {
		if err := rw.node(n); err != nil {
			return nil, err
		}
	}
	return ns, nil
}

func (rw *rewriter) wrapper(w *nodes.Wrapper, first, last nodes.Node) error {
	if w == nil {
		return nil
	}
	body, err := rw.block(w.Nodes)
	if err != nil {
		return err
	}
	if first != nil {
		body = append([]nodes.Node{first}, body...)
	}
	if last != nil {
		body = append(body, last)
	}
	w.Nodes = body
	return nil
}

func (rw *rewriter) node(n nodes.Node) (err error) {
	switch n := n.(type) {
	case *nodes.Data, *nodes.Comment:
		return nil
	case *nodes.Output:
		if n.Expression, err = rw.printed(n.Expression); err != nil {
			return err
		}
		if n.Condition, err = rw.expr(n.Condition, 0); err != nil {
			return err
		}
		n.Alternative, err = rw.printed(n.Alternative)
		return err
	case *nodes.ControlStructureBlock:
		return rw.statement(n)
	}
	return fmt.Errorf("unsupported template node %T", n)
}

func (rw *rewriter) statement(b *nodes.ControlStructureBlock) (err error) {
	switch s := b.ControlStructure.(type) {
	case *controlStructures.ForControlStructure:
		if s.Recursive {
			return fmt.Errorf("line %d: recursive loops are not available", b.Location.Line)
		}
		if s.ObjectEvaluator, err = rw.expr(s.ObjectEvaluator, 0); err != nil {
			return err
		}
		if s.IfCondition, err = rw.expr(s.IfCondition, 0); err != nil {
			return err
		}
		if err := rw.wrapper(s.BodyWrapper, newGuardBlock(opTick, b.Location), nil); err != nil {
			return err
		}
		return rw.wrapper(s.EmptyWrapper, nil, nil)
	case *controlStructures.IfControlStructure:
		for i := range s.Conditions {
			if s.Conditions[i], err = rw.expr(s.Conditions[i], 0); err != nil {
				return err
			}
		}
		for _, w := range s.Wrappers {
			if err := rw.wrapper(w, nil, nil); err != nil {
				return err
			}
		}
		return nil
	case *controlStructures.MacroControlStructure:
		for _, p := range s.Kwargs {
			if p.Value, err = rw.expr(p.Value, 0); err != nil {
				return err
			}
		}
		return rw.wrapper(s.Wrapper, newGuardBlock(opEnter, b.Location), newGuardBlock(opExit, b.Location))
	case *controlStructures.CallControlStructure:
		if err := rw.callArgs(s.Call, 0); err != nil {
			return err
		}
		return rw.wrapper(s.Body, newGuardBlock(opEnter, b.Location), newGuardBlock(opExit, b.Location))
	case *controlStructures.DoControlStructure:
		s.Expression, err = rw.expr(s.Expression, 0)
		return err
	case *controlStructures.BreakControlStructure, *controlStructures.ContinueControlStructure,
		*controlStructures.RawControlStructure:
		return nil
	case *setStmt:
		if t, ok := s.target.(*nodes.GetAttribute); ok {
			if t.Node, err = rw.expr(t.Node, 0); err != nil {
				return err
			}
		}
		if t, ok := s.target.(*nodes.GetItem); ok {
			if t.Node, err = rw.expr(t.Node, 0); err != nil {
				return err
			}
			if t.Arg, err = rw.expr(t.Arg, 0); err != nil {
				return err
			}
		}
		for _, e := range []*nodes.Expression{&s.expr, &s.cond, &s.alt} {
			if *e, err = rw.expr(*e, 0); err != nil {
				return err
			}
		}
		return rw.wrapper(s.body, nil, nil)
	}
	return fmt.Errorf("line %d: unsupported statement %T", b.Location.Line, b.ControlStructure)
}

// printed rewrites a printed expression e and passes its value through __ember_out.
func (rw *rewriter) printed(e nodes.Expression) (nodes.Expression, error) {
	if e == nil {
		return nil, nil
	}
	e, err := rw.expr(e, 0)
	if err != nil {
		return nil, err
	}
	return call(outFunc, e), nil
}

// call is the expression fn(args...).
func call(fn string, args ...nodes.Expression) nodes.Expression {
	loc := args[0].Position()
	name := &tokens.Token{Type: tokens.Name, Val: fn}
	if loc != nil {
		name.Pos, name.Line, name.Col = loc.Pos, loc.Line, loc.Col
	}
	return &nodes.Call{Location: name, Func: &nodes.Name{Name: name}, Args: args, Kwargs: map[string]nodes.Expression{}}
}

func (rw *rewriter) exprs(es []nodes.Expression, depth int) (err error) {
	for i := range es {
		if es[i], err = rw.expr(es[i], depth); err != nil {
			return err
		}
	}
	return nil
}

func (rw *rewriter) kwargs(m map[string]nodes.Expression, depth int) (err error) {
	for k, e := range m {
		if m[k], err = rw.expr(e, depth); err != nil {
			return err
		}
	}
	return nil
}

func (rw *rewriter) callArgs(c *nodes.Call, depth int) (err error) {
	if err := rw.exprs(c.Args, depth+1); err != nil {
		return err
	}
	if err := rw.kwargs(c.Kwargs, depth+1); err != nil {
		return err
	}
	if c.Parent != nil { // a method's object; a plain name stays a name, which list methods write back to
		var p nodes.Expression
		if p, err = rw.expr(c.Parent, depth+1); err != nil {
			return err
		}
		c.Parent = p
	}
	switch f := c.Func.(type) {
	case *nodes.Name:
	case *nodes.GetAttribute:
		_, err = rw.expr(f, depth+1)
	default:
		_, err = rw.expr(f, depth+1)
	}
	return err
}

// expr rewrites e's subexpressions and returns what replaces e.
func (rw *rewriter) expr(e nodes.Expression, depth int) (out nodes.Expression, err error) {
	if e == nil {
		return nil, nil
	}
	if done, ok := rw.memo[e]; ok {
		return done, nil
	}
	if depth > maxNesting {
		return nil, fmt.Errorf("expression nested deeper than %d", maxNesting)
	}
	defer func() {
		if err == nil {
			rw.memo[e] = out
			if out != e {
				rw.memo[out] = out
			}
		}
	}()
	d := depth + 1
	switch n := e.(type) {
	case *nodes.None, *nodes.String, *nodes.Integer, *nodes.Float, *nodes.Bool, *nodes.Name, *nodes.Error:
		return n, nil
	case *nodes.List:
		return n, rw.exprs(n.Val, d)
	case *nodes.Tuple:
		return n, rw.exprs(n.Val, d)
	case *nodes.Dict:
		for _, p := range n.Pairs {
			if p.Key, err = rw.expr(p.Key, d); err != nil {
				return nil, err
			}
			if p.Value, err = rw.expr(p.Value, d); err != nil {
				return nil, err
			}
		}
		return n, nil
	case *nodes.Pair:
		if n.Key, err = rw.expr(n.Key, d); err != nil {
			return nil, err
		}
		n.Value, err = rw.expr(n.Value, d)
		return n, err
	case *nodes.Call:
		if err := rw.callArgs(n, depth); err != nil {
			return nil, err
		}
		return call(chkFunc, n), nil
	case *nodes.GetItem:
		if n.Node, err = rw.expr(n.Node, d); err != nil {
			return nil, err
		}
		n.Arg, err = rw.expr(n.Arg, d)
		return n, err
	case *nodes.GetSlice:
		for _, p := range []*nodes.Node{&n.Node, &n.Start, &n.End, &n.Step} {
			if *p, err = rw.expr(*p, d); err != nil {
				return nil, err
			}
		}
		return n, nil
	case *nodes.GetAttribute:
		n.Node, err = rw.expr(n.Node, d)
		return n, err
	case *nodes.Negation:
		n.Term, err = rw.expr(n.Term, d)
		return n, err
	case *nodes.UnaryExpression:
		n.Term, err = rw.expr(n.Term, d)
		return n, err
	case *nodes.BinaryExpression:
		if n.Left, err = rw.expr(n.Left, d); err != nil {
			return nil, err
		}
		if n.Right, err = rw.expr(n.Right, d); err != nil {
			return nil, err
		}
		switch n.Operator.Token.Type {
		case tokens.Multiply:
			return call(mulFunc, n.Left, n.Right), nil
		case tokens.Power:
			return call(powFunc, n.Left, n.Right), nil
		case tokens.FloorDivision:
			return call(floorDivFunc, n.Left, n.Right), nil
		case tokens.Modulo:
			return call(chkFunc, call(modFunc, n.Left, n.Right)), nil
		case tokens.Addition, tokens.Tilde:
			return call(chkFunc, n), nil
		}
		return n, nil
	case *nodes.FilteredExpression:
		if n.Expression, err = rw.expr(n.Expression, d); err != nil {
			return nil, err
		}
		for _, f := range n.Filters {
			if err := rw.exprs(f.Args, d); err != nil {
				return nil, err
			}
			if err := rw.kwargs(f.Kwargs, d); err != nil {
				return nil, err
			}
		}
		return call(chkFunc, n), nil
	case *nodes.TestExpression:
		if n.Expression, err = rw.expr(n.Expression, d); err != nil {
			return nil, err
		}
		if err := rw.exprs(n.Test.Args, d); err != nil {
			return nil, err
		}
		return n, rw.kwargs(n.Test.Kwargs, d)
	}
	return nil, fmt.Errorf("unsupported expression %T", e)
}
