package reply

import (
	"encoding/json"
	"testing"
)

func TestJSONCut(t *testing.T) {
	cases := []struct {
		in, keep string
		over, ok bool
	}{
		{` {"a": "}", "b": [1, {"c": "\"}"}]} trailing talk`, ` {"a": "}", "b": [1, {"c": "\"}"}]}`, true, true},
		{`{"a": 1`, `{"a": 1`, false, true},
		{`Sure! {"a":1}`, `S`, true, false},
		{`[1,2]`, `[`, true, false},
	}
	for _, c := range cases {
		var j Cut
		keep, over, ok := "", false, true
		for i := 0; i < len(c.in) && !over; i++ { // byte by byte
			var k string
			k, over, ok = j.Push(c.in[i : i+1])
			keep += k
		}
		if keep != c.keep || over != c.over || ok != c.ok {
			t.Errorf("%q: %q %v %v", c.in, keep, over, ok)
		}
		if c.over && c.ok && !json.Valid([]byte(keep)) {
			t.Errorf("%q: kept invalid JSON", c.in)
		}
	}
}
