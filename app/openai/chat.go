package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"ember/app/reply"
	"ember/inference/engine"
	"ember/inference/jsonprefix"
	"ember/inference/prompt"
)

// chat serves POST /v1/chat/completions: decode, validate, render, generate, answer.
func (h *Handler) chat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if e := h.decode(w, r, &req); e != nil {
		writeError(w, e)
		return
	}
	p, msgs, ro, e := h.validateChat(&req)
	if e != nil {
		writeError(w, e)
		return
	}
	ctx := r.Context()
	text, err := h.b.Render(ctx, msgs, ro.tools.defs, true)
	if err != nil {
		writeError(w, renderError(ctx, err))
		return
	}
	p.base.Prompt, p.base.ParseSpecial = text, true
	ro.startInThink = strings.HasSuffix(strings.TrimRight(text, " \t\r\n"), "<think>")
	p.base.JSON, p.base.ThinkFirst = ro.json, ro.startInThink // sampling keeps the reply a JSON object

	c := chatCall{h: h, w: w, r: r, p: p, ro: ro, id: newID("chatcmpl-"), created: time.Now().Unix()}
	if p.stream {
		c.stream()
	} else {
		c.complete()
	}
}

func (h *Handler) validateChat(req *chatRequest) (genParams, []prompt.Message, runOpts, *apiError) {
	ro := runOpts{think: true}
	if e := h.checkModel(req.Model); e != nil {
		return genParams{}, nil, ro, e
	}
	if len(req.Messages) == 0 {
		return genParams{}, nil, ro, invalid("messages", "Missing required parameter: 'messages' must be a non-empty array.").withCode("missing_required_parameter")
	}
	msgs := make([]prompt.Message, len(req.Messages))
	for i, m := range req.Messages {
		role := m.Role
		switch role {
		case "system", "user", "assistant", "tool":
		case "developer":
			role = "system"
		case "function":
			role = "tool"
		default:
			return genParams{}, nil, ro, invalid("messages", "Invalid value for 'messages[%d].role': %q is not one of system, developer, user, assistant, tool.", i, m.Role).withCode("invalid_value")
		}
		msgs[i] = prompt.Message{Role: role, Content: string(m.Content), ReasoningContent: m.ReasoningContent,
			ToolCalls: promptToolCalls(m.ToolCalls), ToolCallID: m.ToolCallID, Name: m.Name}
	}
	maxTok, maxParam := req.MaxTokens, "max_tokens"
	if req.MaxCompletionTokens != nil {
		maxTok, maxParam = req.MaxCompletionTokens, "max_completion_tokens"
	}
	p, e := req.params(maxTok, maxParam)
	if e != nil {
		return p, nil, ro, e
	}
	if req.Logprobs != nil && *req.Logprobs {
		p.base.Logprobs = true
	}
	if req.TopLogprobs != nil {
		if *req.TopLogprobs < 0 || *req.TopLogprobs > 20 {
			return p, nil, ro, invalid("top_logprobs", "Invalid 'top_logprobs': %d is outside 0..20.", *req.TopLogprobs).withCode("invalid_value")
		}
		if !p.base.Logprobs && *req.TopLogprobs > 0 {
			return p, nil, ro, invalid("top_logprobs", "Invalid 'top_logprobs': 'logprobs' must be true to use top_logprobs.").withCode("invalid_value")
		}
		p.base.TopLogprobs = int(*req.TopLogprobs)
	}
	if f := req.ResponseFormat; f != nil {
		switch f.Type {
		case "", "text":
		case "json_object":
			ro.json = true
		case "json_schema":
			if f.JSONSchema == nil || len(f.JSONSchema.Schema) == 0 {
				return p, nil, ro, invalid("response_format.json_schema", "Missing required parameter: 'response_format.json_schema.schema'.").withCode("missing_required_parameter")
			}
			var v any
			if err := json.Unmarshal(f.JSONSchema.Schema, &v); err != nil {
				return p, nil, ro, invalid("response_format.json_schema.schema", "Invalid schema: %v.", err).withCode("invalid_value")
			}
			sch, err := jsonprefix.Compile(v)
			if err != nil {
				return p, nil, ro, invalid("response_format.json_schema.schema", "This JSON schema is not supported: %v.", err).withCode("unsupported_value")
			}
			if !sch.Object() {
				return p, nil, ro, invalid("response_format.json_schema.schema", "The schema must describe an object.").withCode("invalid_value")
			}
			ro.json, p.base.JSONSchema = true, sch
		default:
			return p, nil, ro, invalid("response_format.type", "Invalid value for 'response_format.type': %q is not one of text, json_object, json_schema.", f.Type).withCode("invalid_value")
		}
	}
	if pr := req.Prediction; pr != nil {
		if pr.Type != "content" {
			return p, nil, ro, invalid("prediction.type", "Invalid value for 'prediction.type': %q is not content.", pr.Type).withCode("invalid_value")
		}
		p.base.Prediction = string(pr.Content)
	}
	ts, e := validateTools(req.Tools, req.ToolChoice)
	if e != nil {
		return p, nil, ro, e
	}
	ts.single = req.ParallelToolCalls != nil && !*req.ParallelToolCalls
	ro.tools = ts
	if ts.schema != nil {
		if ro.json {
			return p, nil, ro, invalid("tool_choice", "A JSON response_format cannot be combined with tool_choice %s: the reply is a tool call.", bytes.TrimSpace(req.ToolChoice)).withCode("invalid_value")
		}
		ro.json, p.base.JSONSchema = true, ts.schema
	}
	return p, msgs, ro, nil
}

// chatCall is one chat completion request being answered.
type chatCall struct {
	h       *Handler
	w       http.ResponseWriter
	r       *http.Request
	p       genParams
	ro      runOpts
	id      string
	created int64
}

// complete answers with one JSON object after all n choices have finished.
func (c *chatCall) complete() {
	ctx := c.r.Context()
	resp := chatCompletion{ID: c.id, Object: "chat.completion", Created: c.created, Model: c.h.b.ModelName(),
		SystemFingerprint: fingerprint, Usage: &usage{}}
	st, e := startAll(c.p.n, func(i int) (<-chan engine.Event, context.CancelFunc, *apiError) {
		return c.h.start(ctx, c.p.request(i), "messages")
	})
	if e != nil {
		writeError(c.w, e)
		return
	}
	defer st.cancel()
	for i := range c.p.n {
		ch, cancel := st.chs[i], st.cancels[i]
		var content, reasoning strings.Builder
		var lps *chatLogprobs
		if c.p.base.Logprobs {
			lps = &chatLogprobs{Content: []tokenLogprob{}}
		}
		out := consume(ch, cancel, c.ro, func(pc piece) error {
			content.WriteString(pc.content)
			reasoning.WriteString(pc.reasoning)
			if lps != nil && pc.lp != nil {
				lps.Content = append(lps.Content, c.h.chatLogprob(pc.lp))
			}
			return nil
		})
		if out.gone {
			return
		}
		if out.failed != nil {
			writeError(c.w, out.failed)
			return
		}
		msg := outMessage{Role: "assistant", ReasoningContent: reasoning.String()}
		text, finish := content.String(), out.finish
		if c.ro.tools.names != nil {
			var calls []reply.Call
			if text, calls = reply.ParseCalls(text, c.ro.tools.names); calls != nil {
				msg.ToolCalls, finish = outCalls(c.ro.tools.limit(calls), false), "tool_calls"
			}
		}
		if text != "" || msg.ToolCalls == nil {
			msg.Content = &text
		}
		resp.Choices = append(resp.Choices, chatChoice{Index: i, Logprobs: lps, FinishReason: finish, Message: msg})
		addUsage(resp.Usage, out, i == 0)
	}
	writeJSON(c.w, resp)
}

// stream answers with server-sent chunks, choice after choice (all are generated at
// once). The choices are started before the response begins, so that a prompt the
// engine refuses still gets a proper error status.
func (c *chatCall) stream() {
	ctx := c.r.Context()
	st, e := startAll(c.p.n, func(i int) (<-chan engine.Event, context.CancelFunc, *apiError) {
		return c.h.start(ctx, c.p.request(i), "messages")
	})
	if e != nil {
		writeError(c.w, e)
		return
	}
	defer st.cancel()
	s := newSSE(c.w, c.h.opt.WriteTimeout)
	defer s.close()
	var u usage
	for i := range c.p.n {
		ch, cancel := st.chs[i], st.cancels[i]
		empty := ""
		if c.chunk(s, chunkChoice{Index: i, Delta: delta{Role: "assistant", Content: &empty}}) != nil {
			cancel()
			return
		}
		var ts *reply.ToolStream
		if c.ro.tools.names != nil {
			ts = reply.NewToolStream(c.ro.tools.names)
		}
		out := consume(ch, cancel, c.ro, func(pc piece) error {
			if ts != nil {
				pc.content = ts.Push(pc.content)
				if pc.content == "" && pc.reasoning == "" && (pc.lp == nil || !c.p.base.Logprobs) {
					return nil
				}
			}
			d := delta{}
			if pc.content != "" {
				d.Content = &pc.content
			}
			if pc.reasoning != "" {
				d.ReasoningContent = &pc.reasoning
			}
			cc := chunkChoice{Index: i, Delta: d}
			if c.p.base.Logprobs && pc.lp != nil {
				cc.Logprobs = &chatLogprobs{Content: []tokenLogprob{c.h.chatLogprob(pc.lp)}}
			}
			return c.chunk(s, cc)
		})
		if out.gone {
			return
		}
		if out.failed != nil {
			s.data(out.failed.body())
			return
		}
		finish := out.finish
		if ts != nil {
			rest, calls := ts.Finish()
			if rest != "" && c.chunk(s, chunkChoice{Index: i, Delta: delta{Content: &rest}}) != nil {
				return
			}
			if calls != nil {
				finish = "tool_calls"
				if c.chunk(s, chunkChoice{Index: i, Delta: delta{ToolCalls: outCalls(c.ro.tools.limit(calls), true)}}) != nil {
					return
				}
			}
		}
		if c.chunk(s, chunkChoice{Index: i, FinishReason: &finish}) != nil {
			return
		}
		addUsage(&u, out, i == 0)
	}
	if c.p.includeUsage {
		b, _ := json.Marshal(u)
		s.data(chatChunk{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.h.b.ModelName(),
			SystemFingerprint: fingerprint, Choices: []chunkChoice{}, Usage: b})
	}
	s.done()
}

func (c *chatCall) chunk(s *sseWriter, cc chunkChoice) error {
	ch := chatChunk{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.h.b.ModelName(),
		SystemFingerprint: fingerprint, Choices: []chunkChoice{cc}}
	if c.p.includeUsage {
		ch.Usage = json.RawMessage("null")
	}
	return s.data(ch)
}

// fingerprint is system_fingerprint: which server configuration produced a reply.
const fingerprint = "fp_ember"
