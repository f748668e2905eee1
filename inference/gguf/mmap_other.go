//go:build !unix

package gguf

import (
	"io"
	"os"
)

// mapFile reads the size bytes of fd into memory, on systems where we do not mmap.
func mapFile(fd *os.File, size int) (data []byte, unmap func() error, err error) {
	data = make([]byte, size)
	if _, err := io.ReadFull(fd, data); err != nil {
		return nil, nil, err
	}
	return data, nil, nil
}
