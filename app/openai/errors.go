package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"ember/inference/engine"
)

// apiError is an error answered in OpenAI's shape
// {"error":{"message","type","param","code"}} with an HTTP status.
type apiError struct {
	status  int
	message string
	typ     string // "invalid_request_error" for 4xx, "server_error" for 5xx
	param   string // the offending request field, "" for null
	code    string // a machine-readable code, "" for null
}

func (e *apiError) Error() string { return e.message }

func (e *apiError) body() errorBody {
	d := errorDetail{Message: e.message, Type: e.typ}
	if e.param != "" {
		d.Param = &e.param
	}
	if e.code != "" {
		d.Code = &e.code
	}
	return errorBody{Error: d}
}

func invalid(param, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, typ: "invalid_request_error", param: param, message: fmt.Sprintf(format, args...)}
}

func (e *apiError) withCode(code string) *apiError { e.code = code; return e }

func writeError(w http.ResponseWriter, e *apiError) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(e.status)
	json.NewEncoder(w).Encode(e.body())
}

// typeNames describes the types of request fields for wrong-type errors.
var typeNames = map[reflect.Type]string{
	reflect.TypeFor[textContent](): "a string or an array of text content parts",
	reflect.TypeFor[stopList]():    "a string or an array of strings",
	reflect.TypeFor[promptList]():  "a string, an array of strings, an array of token ids or an array of arrays of token ids",
}

// decodeError turns a failed decode of the request body into a 400 (413 when the body
// was over the limit).
func decodeError(err error) *apiError {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return &apiError{status: http.StatusRequestEntityTooLarge, typ: "invalid_request_error",
			message: fmt.Sprintf("The request body is larger than the limit of %d bytes.", mb.Limit), code: "request_too_large"}
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		te.Field = strings.TrimPrefix(te.Field, "common.") // the embedded struct's name
		want, ok := typeNames[te.Type]
		if !ok && te.Type != nil {
			switch te.Type.Kind() {
			case reflect.Int, reflect.Int32, reflect.Int64:
				want = "an integer"
			case reflect.Float32, reflect.Float64:
				want = "a number"
			case reflect.Bool:
				want = "a boolean"
			case reflect.String:
				want = "a string"
			case reflect.Slice:
				want = "an array"
			default:
				want = "an object"
			}
		}
		got := te.Value
		if strings.HasPrefix(got, "number ") { // out of range for the type: 1e999, 3.5 for an integer
			got = "the " + got + ", which does not fit"
		}
		return invalid(te.Field, "Invalid type for '%s': expected %s, but got %s instead.", te.Field, want, got).withCode("invalid_type")
	}
	if errors.Is(err, errContent) {
		return invalid("messages", "Invalid content: %v.", err).withCode("invalid_value")
	}
	return invalid("", "We could not parse the JSON body of your request (%v). The OpenAI API expects a JSON payload.", err).withCode("invalid_json")
}

// generateError maps an error of Backend.Generate (or Render) to a response;
// promptParam names the request field the prompt came from ("messages" for chat,
// "prompt" for completions).
func generateError(ctx context.Context, err error, contextSize int, promptParam string) *apiError {
	switch {
	case errors.Is(err, engine.ErrContextTooLong):
		return invalid(promptParam, "This model's maximum context length is %d tokens, and your prompt does not fit in it (%v). Please reduce the length of the messages or prompt.", contextSize, err).withCode("context_length_exceeded")
	case errors.Is(err, engine.ErrNoInfill):
		return invalid("suffix", "'suffix' (fill in the middle) is not supported by this model: its vocabulary has no fill-in-the-middle tokens.").withCode("unsupported_value")
	case errors.Is(err, engine.ErrClosed):
		return unavailable()
	case ctx.Err() != nil:
		return &apiError{status: 499, typ: "invalid_request_error", message: "The client closed the request.", code: "cancelled"}
	}
	// The engine's other errors reject the request (an empty prompt, a token outside the
	// vocabulary, top_logprobs out of range): the client's to fix.
	var re *engine.RequestError
	if errors.As(err, &re) {
		param, ok := requestParams[re.Field]
		if !ok {
			param = promptParam
		}
		return invalid(param, "Invalid '%s': %s.", param, re.Msg).withCode("invalid_value")
	}
	return invalid("", "%v", err)
}

// requestParams names the API parameter behind an engine.Request field; the prompt's
// fields (Prompt, Tokens) map to the endpoint's own prompt parameter.
var requestParams = map[string]string{
	"Suffix":      "suffix",
	"TopLogprobs": "top_logprobs",
	"LogitBias":   "logit_bias",
}

func renderError(ctx context.Context, err error) *apiError {
	if ctx.Err() != nil {
		return &apiError{status: 499, typ: "invalid_request_error", message: "The client closed the request.", code: "cancelled"}
	}
	// A template raises exceptions for conversations it cannot render (roles that do not
	// alternate, a system message where none is allowed): the request's to fix.
	return invalid("messages", "The model's chat template cannot render these messages: %v", err).withCode("invalid_messages")
}

// unavailable is the answer to a request the engine refused or ended because it is
// closing (the model is being unloaded or the server is stopping).
func unavailable() *apiError {
	return &apiError{status: http.StatusServiceUnavailable, typ: "server_error", message: "The engine is shutting down; please retry.", code: "unavailable"}
}

func serverError(format string, args ...any) *apiError {
	return &apiError{status: http.StatusInternalServerError, typ: "server_error", message: fmt.Sprintf(format, args...)}
}
