package tokenizer

import (
	"reflect"
	"testing"
)

// words splits s with p and returns the words.
func words(p *pretokenizer, s string) []string {
	cps := []rune(s)
	var out []string
	i := 0
	ws, _ := p.split(cps, nil, nil)
	for _, n := range ws {
		out = append(out, string(cps[i:i+n]))
		i += n
	}
	return out
}

func TestPretokenizers(t *testing.T) {
	for _, c := range []struct {
		p    *pretokenizer
		in   string
		want []string
	}{
		{preGPT2, "Hello world's 123  x\n", []string{"Hello", " world", "'s", " 123", " ", " x", "\n"}},
		{preGPT2, "I'M   ok!!", []string{"I", "'", "M", "  ", " ok", "!!"}},
		{preLlama3, "I'M 12345 ok\r\n\n x", []string{"I", "'M", " ", "123", "45", " ok", "\r\n\n", " x"}},
		{preQwen2, "ab12 .,\n", []string{"ab", "1", "2", " .,\n"}},
		{preDefault, "a,b 1234", []string{"a", ",", "b", " ", "123", "4"}},
		{preDeepseekV3, "Hello world", []string{"Hello", " world"}},
		{preDeepseekV3, "abc1234567def", []string{"abc", "123", "456", "7", "def"}},
		{preDeepseekV3, "$hello a.b", []string{"$hello", " a", ".b"}},
		{preDeepseekV3, "你好世界hello", []string{"你好世界", "hello"}},
		{preDeepseekV3, "x  y\n\nz", []string{"x", " ", " y", "\n\n", "z"}},
		{preDeepseekV3, "cafe\u0301 ~~ !!", []string{"cafe\u0301", " ", "~~", " !!"}},
		{preDeepseekLLM, "Hi 你好 12\n", []string{"Hi", " ", "你好", " ", "12", "\n"}},
		{preDeepseekCoder, "x=12;", []string{"x", "=", "1", "2", ";"}},
	} {
		if got := words(c.p, c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s(%q) = %q, want %q", c.p.name, c.in, got, c.want)
		}
	}
}
