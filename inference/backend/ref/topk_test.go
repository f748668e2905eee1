package ref_test

import (
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/backendtest"
	"ember/inference/backend/ref"
)

func TestTopK(t *testing.T) {
	backendtest.RunTopK(t, func(*testing.T) backend.Backend { return ref.New() })
}
