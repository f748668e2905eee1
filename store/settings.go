package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Setting returns the value saved under key, or ErrNotFound.
func (s *Store) Setting(ctx context.Context, key string) (string, error) {
	var v string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		return "", wrapErr(fmt.Sprintf("setting %q", key), err)
	}
	return v, nil
}

// SetSetting saves value under key.
func (s *Store) SetSetting(ctx context.Context, key, value string) error {
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	return wrapErr(fmt.Sprintf("save setting %q", key), err)
}

// Model is a model file Ember knows about.
type Model struct {
	Path        string // the GGUF file; the key
	Name        string // display name (for Ollama models, from the manifest)
	Arch        string // general.architecture, e.g. "llama"
	Size        int64  // file size in bytes
	Quant       string // e.g. "Q4_K_M"
	CtxLength   int    // the model's trained context length, in tokens
	Fingerprint string // identifies the file's content (e.g. size and a hash of its header)
	Source      string // where it was found: "added", "ollama", "lmstudio", "llama.cpp", ...
	Added       time.Time
}

// PutModel saves m, replacing any model with the same path.
func (s *Store) PutModel(ctx context.Context, m Model) error {
	if m.Path == "" {
		return errors.New("store: save model: empty path")
	}
	if m.Added.IsZero() {
		m.Added = time.Now()
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO models (path, name, arch, size, quant, ctx_length, fingerprint, source, added_ms)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (path) DO UPDATE SET name = excluded.name, arch = excluded.arch,
		size = excluded.size, quant = excluded.quant, ctx_length = excluded.ctx_length, fingerprint = excluded.fingerprint,
		source = excluded.source`,
		m.Path, m.Name, m.Arch, m.Size, m.Quant, m.CtxLength, m.Fingerprint, m.Source, millis(m.Added))
	return wrapErr(fmt.Sprintf("save model %s", m.Path), err)
}

// Models lists the known models by name.
func (s *Store) Models(ctx context.Context) ([]Model, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT path, name, arch, size, quant, ctx_length, fingerprint, source, added_ms
		FROM models ORDER BY name, path`)
	if err != nil {
		return nil, wrapErr("list models", err)
	}
	defer rows.Close()
	var out []Model
	for rows.Next() {
		var m Model
		var added int64
		if err := rows.Scan(&m.Path, &m.Name, &m.Arch, &m.Size, &m.Quant, &m.CtxLength, &m.Fingerprint, &m.Source, &added); err != nil {
			return nil, wrapErr("list models", err)
		}
		m.Added = fromMillis(added)
		out = append(out, m)
	}
	return out, wrapErr("list models", rows.Err())
}

// DeleteModel forgets the model at path (the file is left alone).
func (s *Store) DeleteModel(ctx context.Context, path string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM models WHERE path = ?`, path)
	if err == nil {
		err = mustAffect(res, "model")
	}
	return wrapErr(fmt.Sprintf("delete model %s", path), err)
}
