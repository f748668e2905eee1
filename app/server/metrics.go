package server

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"ember/inference/engine"
)

// Metrics are the server's Prometheus metrics, served at GET /metrics. The request
// counters are fed by the server's middleware, the token counters and latency histograms
// by Observe (Model.Generate calls it), and the KV-cache gauges by whoever knows them
// (the engine, later) through SetKVBlocks and SetPrefixCacheHitRate. A nil *Metrics
// accepts every call and records nothing. Safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	requests    *prometheus.CounterVec   // route, code
	reqSeconds  *prometheus.HistogramVec // route
	inflight    prometheus.Gauge
	promptToks  prometheus.Counter
	cachedToks  prometheus.Counter
	complToks   prometheus.Counter
	generations *prometheus.CounterVec // finish
	ttft        prometheus.Histogram
	itl         prometheus.Histogram
	kvUsed      prometheus.Gauge
	kvFree      prometheus.Gauge
	prefixHit   prometheus.Gauge

	stats func() engine.Stats // read at every scrape; nil until WatchEngine
}

// NewMetrics registers Ember's metrics, plus the Go runtime and process collectors, on a
// registry of its own (not the global one, so tests and several servers do not clash).
func NewMetrics() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	f := func(c prometheus.Collector) { m.reg.MustRegister(c) }
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ember_http_requests_total",
		Help: "HTTP requests by route (the matched pattern, or \"unmatched\") and status code.",
	}, []string{"route", "code"})
	m.reqSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "ember_http_request_duration_seconds",
		Help:    "Time from request received to handler returned (whole streams included), by route.",
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 10), // 1ms .. ~262s
	}, []string{"route"})
	m.inflight = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "ember_http_requests_in_flight",
		Help: "HTTP requests being served now.",
	})
	m.promptToks = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ember_prompt_tokens_total",
		Help: "Prompt tokens of finished generations, cached ones included.",
	})
	m.cachedToks = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ember_prompt_cached_tokens_total",
		Help: "Prompt tokens whose KV was reused from the cache instead of recomputed.",
	})
	m.complToks = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ember_completion_tokens_total",
		Help: "Generated tokens.",
	})
	m.generations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ember_generations_total",
		Help: "Finished generations by finish reason (stop, length, cancelled, error).",
	}, []string{"finish"})
	m.ttft = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "ember_time_to_first_token_seconds",
		Help:    "Time from request accepted by the engine (queueing included) to first token sampled.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 14), // 5ms .. ~41s
	})
	m.itl = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "ember_inter_token_latency_seconds",
		Help:    "Time between consecutive streamed tokens of one generation.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 13), // 1ms .. ~4s
	})
	m.kvUsed = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "ember_kv_cache_blocks_used",
		Help: "KV-cache blocks in use (set by the engine).",
	})
	m.kvFree = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "ember_kv_cache_blocks_free",
		Help: "KV-cache blocks free (set by the engine).",
	})
	m.prefixHit = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "ember_prefix_cache_hit_ratio",
		Help: "Fraction of prompt tokens served from the prefix cache, 0..1 (set by the engine).",
	})
	// Speculative decoding's counters are the engine's own, read at each scrape.
	engineCounter := func(name, help string, v func(engine.Stats) int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 {
			if m.stats == nil {
				return 0
			}
			return float64(v(m.stats()))
		})
	}
	drafted := engineCounter("ember_draft_tokens_total",
		"Draft tokens of speculative decoding (prompt lookup, predicted outputs) evaluated (set by the engine).",
		func(st engine.Stats) int64 { return st.DraftTokens })
	accepted := engineCounter("ember_draft_accepted_tokens_total",
		"Draft tokens of speculative decoding (prompt lookup, predicted outputs) that held (set by the engine).",
		func(st engine.Stats) int64 { return st.DraftAccepted })
	for _, c := range []prometheus.Collector{m.requests, m.reqSeconds, m.inflight, m.promptToks,
		m.cachedToks, m.complToks, m.generations, m.ttft, m.itl, m.kvUsed, m.kvFree, m.prefixHit, drafted, accepted,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		f(c)
	}
	return m
}

// Registry is the registry the metrics live in, for callers that add their own.
func (m *Metrics) Registry() *prometheus.Registry {
	if m == nil {
		return nil
	}
	return m.reg
}

// Handler serves the metrics in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m.stats != nil {
			st := m.stats()
			m.SetKVBlocks(st.KVBlocksUsed, st.KVBlocksFree)
			if st.PrefixLookupTokens > 0 {
				m.SetPrefixCacheHitRate(float64(st.PrefixHitTokens) / float64(st.PrefixLookupTokens))
			}
		}
		h.ServeHTTP(w, r)
	})
}

// WatchEngine makes every scrape read the KV-cache and prefix-cache gauges from stats
// (engine.Engine.Stats). Call it before serving.
func (m *Metrics) WatchEngine(stats func() engine.Stats) {
	if m != nil {
		m.stats = stats
	}
}

// SetKVBlocks sets the KV-cache block gauges.
func (m *Metrics) SetKVBlocks(used, free int) {
	if m == nil {
		return
	}
	m.kvUsed.Set(float64(used))
	m.kvFree.Set(float64(free))
}

// SetPrefixCacheHitRate sets the prefix-cache hit ratio (0..1).
func (m *Metrics) SetPrefixCacheHitRate(r float64) {
	if m == nil {
		return
	}
	m.prefixHit.Set(r)
}

// observeRequest counts one finished HTTP request.
func (m *Metrics) observeRequest(route string, code int, d time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
	m.reqSeconds.WithLabelValues(route).Observe(d.Seconds())
}

func (m *Metrics) requestStarted() func() {
	if m == nil {
		return func() {}
	}
	m.inflight.Inc()
	return m.inflight.Dec
}

// ObserveUsage counts a finished generation's tokens, finish reason and time to first
// token.
func (m *Metrics) ObserveUsage(finish string, u engine.Usage) {
	if m == nil {
		return
	}
	m.promptToks.Add(float64(u.PromptTokens))
	m.cachedToks.Add(float64(u.CachedTokens))
	m.complToks.Add(float64(u.CompletionTokens))
	m.generations.WithLabelValues(finish).Inc()
	if u.CompletionTokens > 0 {
		m.ttft.Observe(u.TTFT.Seconds())
	}
}

// Observe passes a generation's events through, measuring the time between tokens and
// counting the usage of the final event. The returned channel closes after the last
// event. When ctx ends, forwarding stops except for the final event, and in is still
// drained, so the engine is never blocked by this goroutine and the usage is counted.
func (m *Metrics) Observe(ctx context.Context, in <-chan engine.Event) <-chan engine.Event {
	if m == nil {
		return in
	}
	out := make(chan engine.Event, cap(in))
	go func() {
		defer close(out)
		var last time.Time
		forward := true
		for ev := range in {
			if ev.Done {
				m.ObserveUsage(ev.Finish, ev.Usage)
			} else {
				now := time.Now()
				if !last.IsZero() {
					m.itl.Observe(now.Sub(last).Seconds())
				}
				last = now
			}
			if forward {
				select {
				case out <- ev:
					continue
				case <-ctx.Done():
					forward = false
				}
			}
			if ev.Done {
				// The reader may still drain the channel for the final usage; make room
				// for it as the engine does.
				select {
				case out <- ev:
				default:
					select {
					case <-out:
					default:
					}
					out <- ev
				}
			}
		}
	}()
	return out
}
