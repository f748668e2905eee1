package tokenizer

// specialIndex finds which special tokens occur anywhere in a text, so that partition
// scans the text only for those: a token absent from the text cannot occur in any of its
// fragments, so skipping it leaves llama.cpp's result unchanged.
type specialIndex struct {
	first [256]bool        // first bytes of special token texts
	edges map[uint32]int32 // trie: node<<8 | byte -> child node; node 0 is the root
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
	return x
}

// present marks in seen (indexed like Tokenizer.specials) every special token occurring
// in text, and reports whether any does.
func (x *specialIndex) present(text string, seen []bool) bool {
	found := false
	for i := 0; i < len(text); i++ {
		if !x.first[text[i]] {
			continue
		}
		n := int32(0)
		for j := i; j < len(text); j++ {
			c, ok := x.edges[uint32(n)<<8|uint32(text[j])]
			if !ok {
				break
			}
			n = c
			for _, k := range x.ends[n] {
				seen[k] = true
				found = true
			}
		}
	}
	return found
}
