package ref_test

import (
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/backendtest"
	"ember/inference/backend/ref"
)

func TestArgMax(t *testing.T) {
	backendtest.RunArgMax(t, func(*testing.T) backend.Backend { return ref.New() })
}
