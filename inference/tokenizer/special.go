package tokenizer

// specialIndex finds which special tokens occur anywhere in a text, so that partition
// scans the text only for those: a token absent from the text cannot occur in any of its
// fragments, so skipping it leaves llama.cpp's result unchanged.
//
// It is an Aho-Corasick automaton over the tokens' bytes, so a scan takes time linear in
// the text whatever the tokens are (walking the trie afresh from every byte would take
// the text's length times the longest token's: minutes for a megabyte of spaces and a
// vocabulary with a long special token of spaces).
type specialIndex struct {
	first [256]bool        // first bytes of special token texts
	edges map[uint32]int32 // trie: node<<8 | byte -> child node; node 0 is the root
	fail  []int32          // by node: the node of its longest proper suffix in the trie
	out   []int32          // by node: the nearest node on its fail chain (itself included) where tokens end, -1 if none
	ends  map[int32][]int  // node -> indexes into Tokenizer.specials of tokens ending there
}

func newSpecialIndex(texts []string, specials []int32) *specialIndex {
	x := &specialIndex{edges: map[uint32]int32{}, ends: map[int32][]int{}}
	nodes := int32(1)
	for k, id := range specials {
		s := texts[id]
		x.first[s[0]] = true
		n := int32(0)
		for i := 0; i < len(s); i++ {
			e := uint32(n)<<8 | uint32(s[i])
			c, ok := x.edges[e]
			if !ok {
				c = nodes
				nodes++
				x.edges[e] = c
			}
			n = c
		}
		x.ends[n] = append(x.ends[n], k)
	}
	x.link(nodes)
	return x
}

// link sets the fail and out links of the trie's nodes, breadth first (a node's fail
// link is shallower than the node, so it is set before it is needed).
func (x *specialIndex) link(nodes int32) {
	type edge struct {
		b     byte
		child int32
	}
	children := make([][]edge, nodes)
	for e, c := range x.edges {
		children[e>>8] = append(children[e>>8], edge{byte(e), c})
	}
	x.fail, x.out = make([]int32, nodes), make([]int32, nodes)
	x.out[0] = -1
	queue := make([]int32, 0, nodes)
	queue = append(queue, 0)
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, e := range children[n] {
			f := int32(0)
			if n != 0 {
				f = x.step(x.fail[n], e.b)
			}
			x.fail[e.child] = f
			if len(x.ends[e.child]) > 0 {
				x.out[e.child] = e.child
			} else {
				x.out[e.child] = x.out[f]
			}
			queue = append(queue, e.child)
		}
	}
}

// step is the automaton's transition from node n on byte b: the longest suffix of n's
// text and b that is in the trie (the root when none is).
func (x *specialIndex) step(n int32, b byte) int32 {
	for {
		if c, ok := x.edges[uint32(n)<<8|uint32(b)]; ok {
			return c
		}
		if n == 0 {
			return 0
		}
		n = x.fail[n]
	}
}

// present marks in seen (indexed like Tokenizer.specials) every special token occurring
// in text, and reports whether any does.
func (x *specialIndex) present(text string, seen []bool) bool {
	found := false
	n := int32(0)
	for i := 0; i < len(text); i++ {
		if n == 0 && !x.first[text[i]] {
			continue
		}
		n = x.step(n, text[i])
		// Mark the tokens ending here, down the chain of out links. A node whose tokens
		// are marked already had its whole chain marked then: stop there.
		for o := x.out[n]; o >= 0; o = x.out[x.fail[o]] {
			ends := x.ends[o]
			if seen[ends[0]] {
				break
			}
			for _, k := range ends {
				seen[k] = true
			}
			found = true
		}
	}
	return found
}
