//go:build linux

package cpu

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

const (
	arenaReserve = 1 << 40 // address space only: MAP_NORESERVE, untouched pages cost nothing
	madvHugepage = 14      // MADV_HUGEPAGE; syscall has no name for it
	pageSize     = 4 << 10
)

// newArena reserves the arena, or returns an empty one (weights stay mapped) when the
// system refuses or does not say how much memory is available.
func newArena() arena {
	avail, err := memAvailable()
	if err != nil || avail <= 0 {
		return arena{}
	}
	m, err := syscall.Mmap(-1, 0, arenaReserve, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return arena{}
	}
	_ = syscall.Madvise(m, madvHugepage) // a hint: without it the copy still works
	return arena{mem: m, budget: int(avail / 4 * 3)}
}

// memAvailable is /proc/meminfo's MemAvailable in bytes.
func memAvailable() (int64, error) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				return kb << 10, err
			}
		}
	}
	return 0, fmt.Errorf("cpu: no MemAvailable in /proc/meminfo")
}

// release gives b's whole pages back to the system.
func (a *arena) release(b []byte) {
	a.live -= len(b)
	lo := (addr(b) + pageSize - 1) &^ (pageSize - 1)
	hi := (addr(b) + uintptr(len(b))) &^ (pageSize - 1)
	if hi <= lo {
		return
	}
	base := addr(a.mem)
	_ = syscall.Madvise(a.mem[lo-base:hi-base], syscall.MADV_DONTNEED)
}

// close unmaps the reservation.
func (a *arena) close() {
	if a.mem != nil {
		_ = syscall.Munmap(a.mem)
		a.mem = nil
	}
}
