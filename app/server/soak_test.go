package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"ember/app/ollama"
	"ember/app/openai"
	"ember/app/server"
	"ember/inference/backend/cpu"
	"ember/inference/engine"
	"ember/inference/gguf"
	"ember/inference/model/archs"
	"ember/inference/tokenizer"
)

// TestSoak runs 64 concurrent clients against the server for EMBER_SOAK (default 4s;
// the README's figure is 10m): streaming and not, chat and completions, OpenAI and
// Ollama routes, a quarter of them hanging up mid-stream. No answer may be a 5xx, and
// once the clients are done the engine must hold no sequence and no KV block.
func TestSoak(t *testing.T) {
	dur := 4 * time.Second
	if v := os.Getenv("EMBER_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatal(err)
		}
		dur = d
	}
	f, err := gguf.Open(storiesPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	be, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	lm, err := archs.Load(f, be)
	if err != nil {
		t.Fatal(err)
	}
	defer lm.Close()
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(lm, tok, engine.Options{ContextSize: 256, Parallel: 16, CacheTokens: 320, PrefillChunk: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	m := server.NewMetrics()
	md := server.NewModel(eng, "stories260K", f, nil, m)
	ts := httptest.NewServer(server.New(server.Config{}, m, openai.New(md, openai.Options{}), ollama.New(md, ollama.Options{})))
	defer ts.Close()

	bodies := []struct{ path, body string }{
		{"/v1/chat/completions", `{"model":"stories260K","messages":[{"role":"user","content":"Once upon a time %d"}],"max_tokens":%d,"stream":true}`},
		{"/v1/chat/completions", `{"model":"stories260K","messages":[{"role":"user","content":"The dog %d"}],"max_tokens":%d,"n":2}`},
		{"/v1/completions", `{"model":"stories260K","prompt":"Lily went %d","max_tokens":%d,"stream":true,"logprobs":2}`},
		{"/api/chat", `{"model":"stories260K","messages":[{"role":"user","content":"Tom saw %d"}],"options":{"num_predict":%d}}`},
		{"/api/generate", `{"model":"stories260K","prompt":"One day %d","options":{"num_predict":%d},"stream":false}`},
	}
	var requests, fiveXX, hungUp atomic.Int64
	var mem0 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&mem0)
	rss0 := rssKiB()
	var rssMid atomic.Int64 // resident memory half-way, to tell growth from warm-up
	go func() {
		time.Sleep(dur / 2)
		rssMid.Store(rssKiB())
	}()
	deadline := time.Now().Add(dur)
	var wg sync.WaitGroup
	for c := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), 7))
			for time.Now().Before(deadline) {
				b := bodies[rng.IntN(len(bodies))]
				body := fmt.Sprintf(b.body, rng.IntN(1000), 1+rng.IntN(40))
				ctx, cancel := context.WithCancel(context.Background())
				req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+b.path, strings.NewReader(body))
				resp, err := http.DefaultClient.Do(req)
				requests.Add(1)
				if err != nil {
					cancel()
					continue
				}
				if resp.StatusCode >= 500 {
					fiveXX.Add(1)
				}
				if rng.IntN(4) == 0 { // hang up after a line or two
					r := bufio.NewReader(resp.Body)
					r.ReadString('\n')
					cancel()
					hungUp.Add(1)
				} else {
					io.Copy(io.Discard, resp.Body)
				}
				resp.Body.Close()
				cancel()
			}
		}()
	}
	wg.Wait()
	if n := fiveXX.Load(); n > 0 {
		t.Errorf("%d of %d answers were 5xx", n, requests.Load())
	}
	// Every generation ends (disconnects cancel theirs) and gives its blocks back.
	deadline = time.Now().Add(10 * time.Second)
	for {
		st := eng.Stats()
		if st.Running == 0 && st.Waiting == 0 && st.KVBlocksUsed == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the soak the engine still holds: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	var mem1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&mem1)
	st := eng.Stats()
	t.Logf("%d requests in %v (%d hung up), 0 blocks used after, %d preemptions, prefix hits %d of %d tokens, heap in use %d -> %d KiB, resident %d -> %d (half-way) -> %d KiB",
		requests.Load(), dur, hungUp.Load(), st.Preemptions, st.PrefixHitTokens, st.PrefixLookupTokens, mem0.HeapInuse>>10, mem1.HeapInuse>>10,
		rss0, rssMid.Load(), rssKiB())
}

// rssKiB is the process's resident memory in KiB (Linux; 0 elsewhere).
func rssKiB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var n int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &n)
			return n
		}
	}
	return 0
}
