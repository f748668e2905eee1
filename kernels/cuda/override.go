package cuda

import (
	"fmt"
	"os"
	"path/filepath"
)

// DirEnv names an environment variable that, when set, makes PTX read the modules from
// that directory instead of the embedded copies: for trying kernels freshly compiled on
// a GPU machine without rebuilding the Go program.
const DirEnv = "EMBER_CUDA_PTX_DIR"

func fromDir(name string) ([]byte, bool, error) {
	dir := os.Getenv(DirEnv)
	if dir == "" {
		return nil, false, nil
	}
	b, err := os.ReadFile(filepath.Join(dir, name+".ptx"))
	if err != nil {
		return nil, true, fmt.Errorf("kernels/cuda: module %q from $%s: %w", name, DirEnv, err)
	}
	return append(b, 0), true, nil
}
