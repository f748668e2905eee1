package ollama

import (
	"net/http"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/types/model"
)

func (h *Handler) tags(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, api.ListResponse{Models: []api.ListModelResponse{{
		Name: h.tagged(), Model: h.tagged(), ModifiedAt: h.b.ModifiedAt(),
		Size: h.b.ModelSize(), Digest: h.b.ModelDigest(), Details: h.b.ModelDetails(),
	}}})
}

// forever is the expiry /api/ps shows: Ember keeps its model loaded.
var forever = time.Date(2318, 11, 29, 0, 0, 0, 0, time.UTC)

func (h *Handler) ps(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, api.ProcessResponse{Models: []api.ProcessModelResponse{{
		Name: h.tagged(), Model: h.tagged(), Size: h.b.ModelSize(), Digest: h.b.ModelDigest(),
		Details: h.b.ModelDetails(), ExpiresAt: forever, ContextLength: h.b.ContextSize(),
	}}})
}

func (h *Handler) version(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]string{"version": h.opt.Version})
}

func (h *Handler) show(w http.ResponseWriter, r *http.Request) {
	var req api.ShowRequest
	if e := h.decode(w, r, &req); e != nil {
		writeStatusError(w, e)
		return
	}
	name := req.Model
	if name == "" {
		name = req.Name
	}
	if e := h.checkModel(name); e != nil {
		writeStatusError(w, e)
		return
	}
	tmpl := h.b.Template()
	// Every model takes tools: a template that does not list them gets them in the
	// system turn (Backend.Render). Clients look for "tools" before they send any.
	caps := []model.Capability{model.CapabilityCompletion, model.CapabilityTools}
	if strings.Contains(tmpl, "<think>") {
		caps = append(caps, model.CapabilityThinking)
	}
	if h.b.Infill() { // editors look for "insert" before they send a suffix
		caps = append(caps, model.CapabilityInsert)
	}
	writeJSON(w, api.ShowResponse{
		Template:     tmpl,
		Details:      h.b.ModelDetails(),
		ModelInfo:    h.b.ModelInfo(),
		Capabilities: caps,
		ModifiedAt:   h.b.ModifiedAt(),
	})
}
