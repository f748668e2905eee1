package engine

import "strings"

// stopper cuts the stream at the first stop string, and holds back any tail that could
// be the start of one, so streamed text never shows part of a stop string.
type stopper struct {
	stops   []string
	pending string
}

// push adds generated text and returns what may be shown now; hit reports that a stop
// string was found (out is then the text before it, and generation should end).
func (s *stopper) push(text string) (out string, hit bool) {
	s.pending += text
	if len(s.stops) == 0 {
		out, s.pending = s.pending, ""
		return out, false
	}
	cut := -1
	for _, st := range s.stops {
		if st == "" {
			continue
		}
		if i := strings.Index(s.pending, st); i >= 0 && (cut < 0 || i < cut) {
			cut = i
		}
	}
	if cut >= 0 {
		out, s.pending = s.pending[:cut], ""
		return out, true
	}
	keep := 0
	for _, st := range s.stops {
		for n := min(len(st)-1, len(s.pending)); n > keep; n-- {
			if strings.HasSuffix(s.pending, st[:n]) {
				keep = n
				break
			}
		}
	}
	out = s.pending[:len(s.pending)-keep]
	s.pending = s.pending[len(s.pending)-keep:]
	return out, false
}

// flush returns the held-back text at the end of generation.
func (s *stopper) flush() string {
	out := s.pending
	s.pending = ""
	return out
}
