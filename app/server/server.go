// Package server is the HTTP plumbing shared by Ember's local APIs: one http.Handler that
// mounts the OpenAI-compatible (app/openai) and Ollama-compatible (app/ollama) handlers
// beside GET /health and GET /metrics, behind safe defaults for a server on the user's
// machine:
//
//   - it listens on 127.0.0.1:11435 (DefaultAddr): loopback only, and one port above
//     Ollama's 11434 so Ember and Ollama can run side by side (clients that expect
//     Ollama are pointed at Ember by changing the port);
//   - it refuses (403) requests whose Host header is not localhost, 127.0.0.1 or [::1]
//     (any port) or one of Config.AllowedHosts: a web page that rebinds its own DNS name to
//     127.0.0.1 (DNS rebinding) still sends its own name as Host;
//   - it refuses (403) requests that carry an Origin header (browsers send it on
//     cross-origin requests) unless the origin is in Config.AllowedOrigins; only then
//     does it answer CORS preflights and add Access-Control-Allow-Origin, for those
//     origins only. So a web page cannot make the model work for it, not even with a
//     "simple" POST that needs no preflight;
//   - with Config.APIKey set, every route but /health needs "Authorization: Bearer KEY"
//     (compared in constant time), answered 401 otherwise.
//
// Errors from this layer have the shape of the API the path belongs to: OpenAI's
// {"error":{"message","type","param","code"}} under /v1/, {"error":"..."} elsewhere.
// The handlers themselves cap request bodies and cancel generation when the client goes.
package server

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"
)

// DefaultAddr is where the server listens by default: loopback only, port 11435, next to
// Ollama's 11434 so the two can coexist.
const DefaultAddr = "127.0.0.1:11435"

// Config configures a Server. The zero value is the safe default.
type Config struct {
	// Addr is the listen address for ListenAndServe; "" means DefaultAddr.
	Addr string
	// AllowedHosts are host names (without port) accepted in the Host header besides
	// localhost, 127.0.0.1 and ::1, e.g. the machine's LAN name when Addr is not
	// loopback. "*" accepts any Host and turns the DNS-rebinding defence off.
	AllowedHosts []string
	// AllowedOrigins are browser origins allowed to call the APIs (CORS), as
	// "scheme://host[:port]"; "*" in a pattern matches any run of characters
	// ("http://localhost:*", "vscode-webview://*"), and "*" alone any origin. Empty:
	// every request with an Origin header is refused.
	AllowedOrigins []string
	// APIKey, when set, is required as "Authorization: Bearer APIKey" on every route
	// but /health.
	APIKey string
	// ShutdownGrace is how long Serve waits for running requests after its context ends
	// before cancelling them; 0 means 5 s.
	ShutdownGrace time.Duration
	// BodyTimeout bounds reading a request's body, so a client that drips it cannot
	// hold a connection and a handler; 0 means 30 s. (Responses have no timeout: a
	// stream lasts as long as its generation.)
	BodyTimeout time.Duration
	// Logger receives server errors; nil means slog.Default().
	Logger *slog.Logger
}

// API is a handler package's entry point: it registers its routes (Go 1.22 patterns such
// as "POST /v1/chat/completions") on the server's mux. *openai.Handler and
// *ollama.Handler are APIs.
type API interface {
	Register(mux *http.ServeMux)
}

// Server is the combined handler. It is an http.Handler, safe for concurrent use.
type Server struct {
	cfg     Config
	mux     *http.ServeMux
	metrics *Metrics
	log     *slog.Logger
}

// New builds the server's handler: the routes of apis, GET /health, GET /metrics (m's,
// or a 404 when m is nil) and the checks described in the package comment.
func New(cfg Config, m *Metrics, apis ...API) *Server {
	s := &Server{cfg: cfg, mux: http.NewServeMux(), metrics: m, log: cfg.Logger}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"ok"}` + "\n"))
	})
	s.mux.Handle("GET /metrics", m.Handler())
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, http.StatusNotFound, "not_found", "no route for "+r.Method+" "+r.URL.Path)
	})
	for _, a := range apis {
		a.Register(s.mux)
	}
	return s
}

// Metrics is the server's metrics (nil if New was given none).
func (s *Server) Metrics() *Metrics { return s.metrics }

// ServeHTTP checks Host, Origin and the API key, then routes the request, counting it
// by route and status.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	route := "unmatched"
	if _, p := s.mux.Handler(r); p != "" && p != "/" {
		route = p
	}
	defer s.metrics.requestStarted()()
	sw := &statusWriter{ResponseWriter: w}
	defer func() { s.metrics.observeRequest(route, sw.code(), time.Since(start)) }()

	if !s.hostAllowed(r.Host) {
		writeError(sw, r, http.StatusForbidden, "forbidden_host", "Host "+quote(r.Host)+" is not allowed; add it to the server's allowed hosts")
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		if !s.originAllowed(origin) {
			writeError(sw, r, http.StatusForbidden, "forbidden_origin", "cross-origin requests from "+quote(origin)+" are not allowed; add the origin to the server's allowed origins")
			return
		}
		h := sw.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
			if rh := r.Header.Get("Access-Control-Request-Headers"); rh != "" {
				h.Set("Access-Control-Allow-Headers", rh)
			}
			h.Set("Access-Control-Max-Age", "600")
			sw.WriteHeader(http.StatusNoContent)
			return
		}
	}
	if s.cfg.APIKey != "" && r.URL.Path != "/health" && !s.authorized(r) {
		sw.Header().Set("WWW-Authenticate", `Bearer realm="ember"`)
		writeError(sw, r, http.StatusUnauthorized, "invalid_api_key", "Incorrect or missing API key; send it as \"Authorization: Bearer KEY\"")
		return
	}
	if r.Body != nil && r.Body != http.NoBody && !s.readBody(w, sw, r) {
		return
	}
	s.mux.ServeHTTP(sw, r)
}

// maxBody bounds the bodies the server buffers; the APIs apply their own, lower limits.
const maxBody = 64 << 20

// readBody reads the whole body under a deadline on conn (the connection's own writer)
// and puts it back in memory, so the handlers never wait on the network. A body that is
// not there in time gets a 408, written to w.
func (s *Server) readBody(conn, w http.ResponseWriter, r *http.Request) bool {
	timeout := s.cfg.BodyTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	rc := http.NewResponseController(conn)
	_ = rc.SetReadDeadline(time.Now().Add(timeout)) // unsupported by test recorders: then no deadline
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err == nil {
		_ = rc.SetReadDeadline(time.Time{})
	}
	// On an error the deadline stays in the past: the server's own read of what is
	// left of the body fails at once instead of waiting for the dripping client.
	r.Body.Close()
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		w.Header().Set("Connection", "close")
		writeError(w, r, http.StatusRequestTimeout, "request_timeout", fmt.Sprintf("the request body did not arrive within %v", timeout))
		return false
	case err != nil:
		writeError(w, r, http.StatusBadRequest, "invalid_body", "reading the request body: "+err.Error())
		return false
	case len(body) > maxBody:
		writeError(w, r, http.StatusRequestEntityTooLarge, "request_too_large", fmt.Sprintf("the request body is over %d bytes", maxBody))
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return true
}

// hostAllowed reports whether a Host header names this machine or an allowed host.
func (s *Server) hostAllowed(hostport string) bool {
	if hostport == "" {
		return true // HTTP/1.0 without Host: not a browser, so not DNS rebinding
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	switch host {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	for _, a := range s.cfg.AllowedHosts {
		if a == "*" || strings.EqualFold(strings.Trim(a, "[]"), host) {
			return true
		}
	}
	return false
}

func (s *Server) originAllowed(origin string) bool {
	for _, p := range s.cfg.AllowedOrigins {
		if glob(strings.ToLower(p), strings.ToLower(origin)) {
			return true
		}
	}
	return false
}

// glob matches s against a pattern whose only metacharacter is '*' (any run), in time
// linear in len(s) times the number of stars (s is a request header).
func glob(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	first, last := parts[0], parts[len(parts)-1]
	if len(s) < len(first)+len(last) || !strings.HasPrefix(s, first) || !strings.HasSuffix(s, last) {
		return false
	}
	mid := s[len(first) : len(s)-len(last)]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(mid, p)
		if i < 0 {
			return false
		}
		mid = mid[i+len(p):]
	}
	return true
}

func (s *Server) authorized(r *http.Request) bool {
	const prefix = "bearer "
	h := r.Header.Get("Authorization")
	if len(h) < len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return false
	}
	got := strings.TrimSpace(h[len(prefix):])
	return subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.APIKey)) == 1
}

// ListenAndServe listens on Config.Addr and serves until ctx ends; see Serve.
func (s *Server) ListenAndServe(ctx context.Context) error {
	addr := s.cfg.Addr
	if addr == "" {
		addr = DefaultAddr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx ends, then shuts down gracefully: it stops accepting,
// lets running requests finish for Config.ShutdownGrace, then cancels their contexts
// (which stops their generations) and closes the connections. It returns nil after a
// shutdown caused by ctx, or the error that stopped serving.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	base, cancelAll := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelAll()
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    1 << 20,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	grace := s.cfg.ShutdownGrace
	if grace <= 0 {
		grace = 5 * time.Second
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		cancelAll() // the streams still running end now
		err = srv.Close()
	}
	if e := <-errc; !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	return err
}

// writeError writes an error in the shape of the API that owns the path.
func writeError(w http.ResponseWriter, r *http.Request, code int, errCode, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	var body any = map[string]string{"error": msg}
	if strings.HasPrefix(r.URL.Path, "/v1/") || r.URL.Path == "/v1" {
		// OpenAI's own 401 for a wrong key is an invalid_request_error with code
		// invalid_api_key; clients go by the status and the code.
		typ := "invalid_request_error"
		if code == http.StatusForbidden {
			typ = "permission_error"
		}
		body = map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": errCode}}
	}
	json.NewEncoder(w).Encode(body)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// statusWriter records the response status; it keeps Flush and, through Unwrap,
// http.ResponseController's other methods working.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}
