package prompt

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkRender renders a 200-turn conversation with real templates; MB/s is output
// bytes, msgs/s conversation turns.
func BenchmarkRender(b *testing.B) {
	msgs := []Message{{Role: "system", Content: "You are a helpful assistant."}}
	for i := range 100 {
		msgs = append(msgs,
			Message{Role: "user", Content: fmt.Sprintf("Question %d: %s", i, strings.Repeat("words ", 50))},
			Message{Role: "assistant", Content: "<think>\nhmm\n</think>\n\n" + strings.Repeat("answer ", 80)})
	}
	for _, file := range []string{"deepseek-r1-distill-qwen-7b.jinja", "llama-3.1-8b-instruct.jinja", "qwen2.5-7b-instruct.jinja"} {
		b.Run(file, func(b *testing.B) {
			src, err := Parse(loadTemplate(b, file).Source())
			if err != nil {
				b.Fatal(err)
			}
			opt := Options{AddGenerationPrompt: true, BOSToken: dsBOS, EOSToken: dsEOS}
			out, err := src.Render(context.Background(), msgs, opt)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(out)))
			for b.Loop() {
				if _, err := src.Render(context.Background(), msgs, opt); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(msgs))*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}
