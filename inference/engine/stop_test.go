package engine

import (
	"strings"
	"testing"
)

func TestStopper(t *testing.T) {
	for _, c := range []struct {
		stops  []string
		pieces []string
		want   string
		hit    bool
	}{
		{nil, []string{"ab", "cd"}, "abcd", false},
		{[]string{"END"}, []string{"hello E", "N", "D more"}, "hello ", true},
		{[]string{"END"}, []string{"hello E", "N", "x"}, "hello ENx", false},
		{[]string{"\n\n", "###"}, []string{"a\n", "b##", "#c"}, "a\nb", true},
		{[]string{"ab"}, []string{"xa", "a", "b"}, "xa", true},
	} {
		s := &stopper{stops: c.stops}
		var sb strings.Builder
		hit := false
		for _, p := range c.pieces {
			out, h := s.push(p)
			// Nothing shown may contain or end with the start of a stop string.
			sb.WriteString(out)
			for _, st := range c.stops {
				if strings.Contains(sb.String(), st) {
					t.Fatalf("%v: shown text %q contains stop %q", c.pieces, sb.String(), st)
				}
			}
			if h {
				hit = true
				break
			}
		}
		if !hit {
			sb.WriteString(s.flush())
		}
		if sb.String() != c.want || hit != c.hit {
			t.Errorf("%q with stops %q: got %q hit %v, want %q hit %v", c.pieces, c.stops, sb.String(), hit, c.want, c.hit)
		}
	}
}
