//go:build unix

package gguf

import (
	"os"
	"syscall"
)

// mapFile maps the size bytes of fd read-only. The mapping outlives fd.
func mapFile(fd *os.File, size int) (data []byte, unmap func() error, err error) {
	if size == 0 {
		return []byte{}, nil, nil // mmap refuses empty mappings; Parse reports the file as truncated
	}
	data, err = syscall.Mmap(int(fd.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, func() error { return syscall.Munmap(data) }, nil
}
