package server_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"ember/app/ollama"
	"ember/app/openai"
	"ember/app/server"
)

// TestSlowDrip: a client that sends its body a byte at a time gets a 408 once the body
// timeout passes, instead of holding the connection and a handler.
func TestSlowDrip(t *testing.T) {
	_, ts := newServer(t, server.Config{BodyTimeout: 300 * time.Millisecond})
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	go func() {
		for range 50 {
			time.Sleep(100 * time.Millisecond)
			if _, err := conn.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	conn.SetReadDeadline(time.Now().Add(4 * time.Second))
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.Contains(status, " 408 ") {
		t.Fatalf("status line %q (%v), want a 408", status, err)
	}
}

// TestInvalidUTF8: invalid UTF-8 in a message is answered, not a 5xx.
func TestInvalidUTF8(t *testing.T) {
	_, ts := newServer(t, server.Config{})
	for _, body := range []string{
		"{\"model\":\"stories260K\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xfe\xc0\x80 hi\"}],\"max_tokens\":3}",
		"{\"model\":\"stories260K\",\"prompt\":\"\xed\xa0\x80\",\"max_tokens\":3}",
	} {
		path := "/v1/chat/completions"
		if strings.Contains(body, "prompt") {
			path = "/v1/completions"
		}
		resp, out := do(t, "POST", ts.URL+path, body, nil)
		if resp.StatusCode >= 500 {
			t.Errorf("%q: %d %s", body, resp.StatusCode, out)
		}
	}
}

// TestDisconnectFreesBlocks: a client that hangs up mid-stream gets its KV blocks freed,
// as /metrics shows. (That the generation itself stops is TestDisconnectCancels in the
// API packages, with a backend slow enough to catch it running.)
func TestDisconnectFreesBlocks(t *testing.T) {
	m := server.NewMetrics()
	md := newModel(t, m)
	ts := httptest.NewServer(server.New(server.Config{}, m, openai.New(md, openai.Options{}), ollama.New(md, ollama.Options{})))
	defer ts.Close()
	used := regexp.MustCompile(`(?m)^ember_kv_cache_blocks_used (\d+)$`)
	blocks := func() string {
		_, body := do(t, "GET", ts.URL+"/metrics", "", nil)
		if g := used.FindStringSubmatch(body); g != nil {
			return g[1]
		}
		t.Fatal("no ember_kv_cache_blocks_used in /metrics")
		return ""
	}
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/completions",
		strings.NewReader(`{"model":"stories260K","prompt":"Once upon a time","max_tokens":240,"stream":true,"temperature":1,"seed":3}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(resp.Body)
	for range 4 {
		if _, err := rd.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for blocks() != "0" {
		if time.Now().After(deadline) {
			t.Fatalf("%s blocks still used after the client left", blocks())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
