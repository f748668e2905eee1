package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// Wire types of OpenAI's chat completions, completions and models APIs. Requests decode
// with encoding/json: unknown fields are ignored (as OpenAI does), optional fields are
// pointers so that absent and null differ from zero, and a value of the wrong type fails
// the decode (a 400 naming the field).

// common are the request fields both completion endpoints share. Besides OpenAI's, it
// takes llama.cpp's sampling extensions top_k, min_p and repeat_penalty.
type common struct {
	Model            string             `json:"model"`
	Stream           bool               `json:"stream"`
	StreamOptions    *streamOptions     `json:"stream_options"`
	MaxTokens        *int64             `json:"max_tokens"`
	Temperature      *float64           `json:"temperature"`
	TopP             *float64           `json:"top_p"`
	N                *int64             `json:"n"`
	Stop             stopList           `json:"stop"`
	PresencePenalty  *float64           `json:"presence_penalty"`
	FrequencyPenalty *float64           `json:"frequency_penalty"`
	Seed             *int64             `json:"seed"`
	LogitBias        map[string]float64 `json:"logit_bias"`

	TopK          *int64   `json:"top_k"`
	MinP          *float64 `json:"min_p"`
	RepeatPenalty *float64 `json:"repeat_penalty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// chatRequest is POST /v1/chat/completions.
type chatRequest struct {
	common
	Messages            []chatMessage   `json:"messages"`
	MaxCompletionTokens *int64          `json:"max_completion_tokens"`
	Logprobs            *bool           `json:"logprobs"`
	TopLogprobs         *int64          `json:"top_logprobs"`
	ResponseFormat      *responseFormat `json:"response_format"`
	Tools               []tool          `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls"`
	Prediction          *prediction     `json:"prediction"`
}

// prediction is a predicted output: text the reply is expected to resemble (a file
// being edited), which speculative decoding drafts from.
type prediction struct {
	Type    string      `json:"type"` // "content"
	Content textContent `json:"content"`
}

type chatMessage struct {
	Role             string      `json:"role"`
	Content          textContent `json:"content"`
	ReasoningContent string      `json:"reasoning_content"`
	ToolCalls        []toolCall  `json:"tool_calls"`
	ToolCallID       string      `json:"tool_call_id"`
	Name             string      `json:"name"`
}

type responseFormat struct {
	Type       string      `json:"type"`
	JSONSchema *jsonSchema `json:"json_schema"`
}

// jsonSchema is response_format's json_schema: a name, the schema, and strict (always
// enforced here, for the subset jsonprefix.Compile takes).
type jsonSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict *bool           `json:"strict"`
}

// completionRequest is POST /v1/completions.
type completionRequest struct {
	common
	Prompt   promptList `json:"prompt"`
	Logprobs *int64     `json:"logprobs"`
	Echo     bool       `json:"echo"`
	Suffix   *string    `json:"suffix"`
	BestOf   *int64     `json:"best_of"`
}

// textContent is a message's content: a string, null, or an array of content parts of
// which only text parts are supported (and an assistant's refusal parts, read as text).
type textContent string

// errContent is a content part this server cannot take (images, audio, files).
var errContent = errors.New("only text content parts are supported")

func (c *textContent) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*c = ""
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = textContent(s)
		return nil
	}
	var parts []struct {
		Type    string  `json:"type"`
		Text    *string `json:"text"`
		Refusal *string `json:"refusal"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		return &json.UnmarshalTypeError{Value: jsonKind(b), Type: reflect.TypeFor[textContent]()}
	}
	var s string
	for _, p := range parts {
		switch {
		case (p.Type == "text" || p.Type == "input_text") && p.Text != nil:
			s += *p.Text
		case p.Type == "refusal" && p.Refusal != nil: // an earlier assistant turn's
			s += *p.Refusal
		default:
			return fmt.Errorf("%w, not %q", errContent, p.Type)
		}
	}
	*c = textContent(s)
	return nil
}

// stopList is "stop": a string, an array of strings, or null.
type stopList []string

func (s *stopList) UnmarshalJSON(b []byte) error {
	switch {
	case bytes.Equal(b, []byte("null")):
		*s = nil
		return nil
	case len(b) > 0 && b[0] == '"':
		var one string
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*s = stopList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return &json.UnmarshalTypeError{Value: jsonKind(b), Type: reflect.TypeFor[stopList]()}
	}
	*s = many
	return nil
}

// promptList is a completion's "prompt": a string, an array of strings, an array of
// token ids, or an array of arrays of token ids. Each element is one prompt.
type promptList []promptItem

type promptItem struct {
	text   string
	tokens []int32 // non-nil for token prompts
}

func (p *promptList) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*p = promptList{{text: s}}
		return nil
	}
	var ss []string
	if err := json.Unmarshal(b, &ss); err == nil {
		*p = make(promptList, len(ss))
		for i, s := range ss {
			(*p)[i] = promptItem{text: s}
		}
		return nil
	}
	var ids []int32
	if err := json.Unmarshal(b, &ids); err == nil {
		*p = promptList{{tokens: nonNil(ids)}}
		return nil
	}
	var idss [][]int32
	if err := json.Unmarshal(b, &idss); err == nil {
		*p = make(promptList, len(idss))
		for i, ids := range idss {
			(*p)[i] = promptItem{tokens: nonNil(ids)}
		}
		return nil
	}
	return &json.UnmarshalTypeError{Value: jsonKind(b), Type: reflect.TypeFor[promptList]()}
}

func nonNil(ids []int32) []int32 {
	if ids == nil {
		return []int32{}
	}
	return ids
}

// jsonKind names the JSON type of a value for error messages.
func jsonKind(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '"':
		return "string"
	case '[':
		return "array"
	case '{':
		return "object"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

// Responses.

type usage struct {
	PromptTokens            int                      `json:"prompt_tokens"`
	CompletionTokens        int                      `json:"completion_tokens"`
	TotalTokens             int                      `json:"total_tokens"`
	PromptTokensDetails     promptTokensDetails      `json:"prompt_tokens_details"`
	CompletionTokensDetails *completionTokensDetails `json:"completion_tokens_details,omitempty"`
}

type promptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

type completionTokensDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
	// The predicted output's tokens that appeared in the reply, and those that did not
	// (drafted and rejected); with a prediction only.
	AcceptedPredictionTokens int `json:"accepted_prediction_tokens"`
	RejectedPredictionTokens int `json:"rejected_prediction_tokens"`
}

type chatCompletion struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"` // "chat.completion"
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	SystemFingerprint string       `json:"system_fingerprint"`
	Choices           []chatChoice `json:"choices"`
	Usage             *usage       `json:"usage"`
}

type chatChoice struct {
	Index        int           `json:"index"`
	Message      outMessage    `json:"message"`
	Logprobs     *chatLogprobs `json:"logprobs"`
	FinishReason string        `json:"finish_reason"`
}

type outMessage struct {
	Role             string     `json:"role"`
	Content          *string    `json:"content"` // null when the reply is only tool calls
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	ToolCalls        []toolCall `json:"tool_calls,omitempty"`
	Refusal          *string    `json:"refusal"`
}

// chatChunk is one streamed event of a chat completion. Usage is absent unless the
// client asked for stream_options.include_usage; then it is null on every chunk but the
// last, whose choices are empty.
type chatChunk struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"` // "chat.completion.chunk"
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	SystemFingerprint string          `json:"system_fingerprint"`
	Choices           []chunkChoice   `json:"choices"`
	Usage             json.RawMessage `json:"usage,omitempty"`
}

type chunkChoice struct {
	Index        int           `json:"index"`
	Delta        delta         `json:"delta"`
	Logprobs     *chatLogprobs `json:"logprobs"`
	FinishReason *string       `json:"finish_reason"`
}

type delta struct {
	Role             string     `json:"role,omitempty"`
	Content          *string    `json:"content,omitempty"`
	ReasoningContent *string    `json:"reasoning_content,omitempty"`
	ToolCalls        []toolCall `json:"tool_calls,omitempty"`
}

type chatLogprobs struct {
	Content []tokenLogprob `json:"content"`
	Refusal []tokenLogprob `json:"refusal"`
}

type tokenLogprob struct {
	Token       string       `json:"token"`
	Logprob     float64      `json:"logprob"`
	Bytes       []int        `json:"bytes"`
	TopLogprobs []topLogprob `json:"top_logprobs"`
}

type topLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

type textCompletion struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"` // "text_completion"
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	SystemFingerprint string       `json:"system_fingerprint"`
	Choices           []textChoice `json:"choices"`
	Usage             *usage       `json:"usage,omitempty"`
}

// textCompletionChunk is a streamed text completion event; like chatChunk it carries
// usage only when asked for.
type textCompletionChunk struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	SystemFingerprint string          `json:"system_fingerprint"`
	Choices           []textChoice    `json:"choices"`
	Usage             json.RawMessage `json:"usage,omitempty"`
}

type textChoice struct {
	Text         string        `json:"text"`
	Index        int           `json:"index"`
	Logprobs     *textLogprobs `json:"logprobs"`
	FinishReason *string       `json:"finish_reason"`
}

// textLogprobs is the legacy completions logprobs shape: parallel arrays.
type textLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []float64            `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

type modelList struct {
	Object string      `json:"object"` // "list"
	Data   []modelCard `json:"data"`
}

type modelCard struct {
	ID      string `json:"id"`
	Object  string `json:"object"` // "model"
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// errorBody is OpenAI's error shape.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// text is the message's content, "" when null.
func (m outMessage) text() string {
	if m.Content == nil {
		return ""
	}
	return *m.Content
}
