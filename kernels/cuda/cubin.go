package cuda

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
)

// The machine code of the two kernel sets (build/gen-cubin.sh): ptxas's output for the
// committed PTX, so that a GPU it was made for loads it as it is. The driver would
// otherwise compile every module's PTX on the first start (the Hopper set took 44-48 s
// on an H100's host, the compatibility set 29-32 s; the driver caches the result in
// ~/.nv/ComputeCache for later starts). sm90: the Hopper set for compute capability 9.0
// (H100, H200, GH200); sm80: the compatibility set for 8.0, which 8.6 and 8.9 (RTX 30
// and 40 series) run as well. Any other GPU compiles the PTX.
//
//go:embed sm90/*.cubin.gz sm90/cubins.txt sm80/*.cubin.gz sm80/cubins.txt
var cubins embed.FS

// Cubin sets: the directories of the machine code.
const (
	HopperCubins = "sm90"
	CompatCubins = "sm80"
)

// Cubin returns the machine code in set (HopperCubins, CompatCubins) of module name,
// made from ptx (the module's PTX as PTX or CompatPTX returns it), and true; or false
// when the set has none for the module, it was made from another PTX body (the first
// line, the sources' hash, aside), or $EMBER_CUDA_PTX_DIR overrides the PTX.
func Cubin(set, name string, ptx []byte) ([]byte, bool, error) {
	if os.Getenv(DirEnv) != "" {
		return nil, false, nil
	}
	want, err := cubinSum(set, name)
	if err != nil || want == "" {
		return nil, false, err
	}
	if PTXBodySum(ptx) != want {
		return nil, false, nil
	}
	b, err := gunzip(cubins, set+"/"+name+".cubin.gz")
	if err != nil {
		return nil, false, fmt.Errorf("kernels/cuda: %s cubin of %q: %w", set, name, err)
	}
	return b, true, nil
}

// PTXBodySum is the hex sha256 of a module's PTX without its first line and without the
// NUL that PTX and CompatPTX end it with: what build/gen-cubin.sh records.
func PTXBodySum(ptx []byte) string {
	ptx = bytes.TrimSuffix(ptx, []byte{0})
	if i := bytes.IndexByte(ptx, '\n'); i >= 0 {
		ptx = ptx[i+1:]
	}
	h := sha256.Sum256(ptx)
	return hex.EncodeToString(h[:])
}

// CubinSums are set's recorded PTX body sums by module (its cubins.txt).
func CubinSums(set string) (map[string]string, error) {
	b, err := cubins.ReadFile(set + "/cubins.txt")
	if err != nil {
		return nil, fmt.Errorf("kernels/cuda: %s cubins: %w", set, err)
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("kernels/cuda: %s/cubins.txt: bad line %q", set, sc.Text())
		}
		out[f[0]] = f[1]
	}
	return out, sc.Err()
}

func cubinSum(set, name string) (string, error) {
	sums, err := CubinSums(set)
	if err != nil {
		return "", err
	}
	return sums[name], nil
}
