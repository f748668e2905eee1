package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"ember/inference/convert"
	"ember/inference/gguf"
	"ember/inference/model"
	"ember/inference/quant"
)

// FoundModel is a GGUF model file another app has already downloaded.
type FoundModel struct {
	Path      string // the GGUF file (for Ollama, its blob)
	Name      string // Ollama: "llama3.2:1b"; others: the file name without .gguf
	Source    string // "ollama", "lmstudio" or "llama.cpp"
	Arch      string // general.architecture, e.g. "llama"
	Size      int64  // bytes
	Quant     string // the llama.cpp file type ("Q4_K_M"), or the type most weights have
	CtxLength int    // <arch>.context_length: the trained context, in tokens; 0 if unknown
	// MemBytes estimates the memory the model takes loaded: its file (mapped) plus the KV
	// cache the engine allocates by default; 0 if unknown.
	MemBytes int64
}

// Model sources.
const (
	SourceOllama   = "ollama"
	SourceLMStudio = "lmstudio"
	SourceLlamaCpp = "llama.cpp"
)

// DiscoverModels lists the GGUF models that Ollama (home/.ollama/models, named from
// its manifests), LM Studio (home/.lmstudio/models, home/.cache/lm-studio/models) and
// llama.cpp (home/.cache/llama.cpp) keep under the home folder home, sorted by
// source and name. Only the first part of a split model is listed, and vision
// projectors (architecture "clip") are left out. A file that cannot be read is
// skipped and named in the returned error; the models found are returned with it.
func DiscoverModels(home string) ([]FoundModel, error) {
	var found []FoundModel
	var errs []error
	add := func(path, name, source string) {
		m, err := describeModel(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s model %s: %w", source, name, err))
			return
		}
		if m.Arch == "clip" {
			return
		}
		m.Name, m.Source = name, source
		found = append(found, m)
	}
	ollama, err := ollamaModels(filepath.Join(home, ".ollama", "models"))
	errs = append(errs, err)
	for _, o := range ollama {
		add(o.path, o.name, SourceOllama)
	}
	for _, dir := range []string{filepath.Join(home, ".lmstudio", "models"), filepath.Join(home, ".cache", "lm-studio", "models")} {
		files, err := ggufFiles(dir)
		errs = append(errs, err)
		for _, f := range files {
			add(f, ggufStem(f), SourceLMStudio)
		}
	}
	files, err := ggufFiles(filepath.Join(home, ".cache", "llama.cpp"))
	errs = append(errs, err)
	for _, f := range files {
		add(f, ggufStem(f), SourceLlamaCpp)
	}
	sort.SliceStable(found, func(i, j int) bool {
		if found[i].Source != found[j].Source {
			return found[i].Source < found[j].Source
		}
		return found[i].Name < found[j].Name
	})
	return found, errors.Join(errs...)
}

// describeModel reads a GGUF file's metadata.
func describeModel(path string) (FoundModel, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return FoundModel{}, err
	}
	defer f.Close()
	m := FoundModel{Path: path, Arch: f.Architecture(), Size: f.Size()}
	if n, err := f.Uint(m.Arch + ".context_length"); err == nil {
		m.CtxLength = int(n)
	}
	if id, err := f.Uint("general.file_type"); err == nil {
		if ft, ok := convert.FileTypeByID(uint32(id)); ok {
			m.Quant = ft.Name
		}
	}
	if m.Quant == "" {
		m.Quant = commonType(f)
	}
	if p, err := model.ReadParams(f, m.Arch); err == nil {
		m.MemBytes = m.Size + kvCacheBytes(p, m.CtxLength)
	}
	return m, nil
}

// kvCacheBytes is the F16 KV cache the engine allocates by default for p: its context
// (the trained one, at most 4096 positions) for two sequences (engine.Options).
func kvCacheBytes(p model.Params, ctxTrain int) int64 {
	ctx := 4096
	if ctxTrain > 0 {
		ctx = min(ctxTrain, ctx)
	}
	perToken := int64(p.NLayer) * int64(p.NKVHead) * int64(p.HeadDim+p.VHeadDim) * 2
	if p.SharedKV {
		perToken = int64(p.NLayer) * int64(p.NKVHead) * int64(p.HeadDim) * 2
	}
	return perToken * int64(2*ctx)
}

// commonType is the tensor type holding the most elements, e.g. "Q4_K".
func commonType(f *gguf.File) string {
	count := map[quant.Type]uint64{}
	for _, t := range f.Tensors {
		count[t.Type] += t.Elements
	}
	best, most := "", uint64(0)
	for t, n := range count {
		if s := t.String(); n > most || (n == most && s < best) {
			best, most = s, n
		}
	}
	return best
}

// splitPart matches the parts of a split GGUF: "-00002-of-00003.gguf".
var splitPart = regexp.MustCompile(`-(\d{5})-of-\d{5}\.gguf$`)

// ggufFiles lists the .gguf files under dir, following symbolic links to files,
// leaving out every part of a split model but the first. A missing dir is no error.
func ggufFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == dir {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() || !strings.EqualFold(filepath.Ext(path), ".gguf") {
			return nil
		}
		if m := splitPart.FindStringSubmatch(strings.ToLower(path)); m != nil && m[1] != "00001" {
			return nil
		}
		if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
			return nil // a broken link, a device
		}
		out = append(out, path)
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("model folder %s: %w", dir, err)
	}
	return out, nil
}

func ggufStem(path string) string {
	base := filepath.Base(path)
	return base[:len(base)-len(filepath.Ext(base))]
}

// ollamaModel is a model in Ollama's store: its name and its weights blob.
type ollamaModel struct{ name, path string }

// ollamaManifest is the part of an Ollama manifest we read.
type ollamaManifest struct {
	Layers []struct {
		MediaType string `json:"mediaType"`
		Digest    string `json:"digest"`
	} `json:"layers"`
}

const ollamaModelLayer = "application/vnd.ollama.image.model"

// ollamaModels reads the manifests under root (manifests/HOST/NAMESPACE/MODEL/TAG)
// and finds each model's weights in root/blobs.
func ollamaModels(root string) ([]ollamaModel, error) {
	manifests := filepath.Join(root, "manifests")
	var out []ollamaModel
	var errs []error
	err := filepath.WalkDir(manifests, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == manifests {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(manifests, path)
		if err != nil {
			return err
		}
		name := ollamaName(filepath.ToSlash(rel))
		blob, err := ollamaBlob(root, path)
		if err != nil {
			errs = append(errs, fmt.Errorf("ollama model %s: %w", name, err))
			return nil
		}
		out = append(out, ollamaModel{name: name, path: blob})
		return nil
	})
	if err != nil {
		errs = append(errs, fmt.Errorf("ollama manifests %s: %w", manifests, err))
	}
	return out, errors.Join(errs...)
}

// ollamaName is how Ollama names the model of a manifest at rel (HOST/NS/MODEL/TAG):
// "llama3.2:1b" for the official library, "NS/MODEL:TAG" for other namespaces of
// the official registry, and "HOST/NS/MODEL:TAG" for other hosts.
func ollamaName(rel string) string {
	parts := strings.Split(rel, "/")
	if len(parts) < 2 {
		return rel
	}
	tag := parts[len(parts)-1]
	repo := parts[:len(parts)-1]
	if len(repo) == 3 && repo[0] == "registry.ollama.ai" {
		repo = repo[1:]
		if repo[0] == "library" {
			repo = repo[1:]
		}
	}
	return strings.Join(repo, "/") + ":" + tag
}

// ollamaBlob is the weights file of the manifest at path.
func ollamaBlob(root, path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var m ollamaManifest
	if err := json.Unmarshal(data, &m); err != nil {
		return "", fmt.Errorf("manifest: %w", err)
	}
	for _, l := range m.Layers {
		if l.MediaType != ollamaModelLayer {
			continue
		}
		algo, hex, ok := strings.Cut(l.Digest, ":")
		if !ok || algo == "" || strings.ContainsAny(hex, `/\.`) || strings.ContainsAny(algo, `/\.`) {
			return "", fmt.Errorf("manifest: bad digest %q", l.Digest)
		}
		blob := filepath.Join(root, "blobs", algo+"-"+hex)
		if _, err := os.Stat(blob); err != nil {
			return "", fmt.Errorf("weights: %w", err)
		}
		return blob, nil
	}
	return "", errors.New("manifest has no model layer")
}
