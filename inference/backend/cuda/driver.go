package cuda

/*
#cgo linux LDFLAGS: -ldl
#include "driver.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"
)

// ErrNoDriver is returned (wrapped) when libcuda.so.1 cannot be loaded or no GPU is present.
var ErrNoDriver = errors.New("cuda: no CUDA driver or GPU")

// driver is the process-wide libcuda handle, loaded once.
var driver struct {
	once sync.Once
	err  error
}

// loadDriver dlopens libcuda.so.1 and calls cuInit, once per process.
func loadDriver() error {
	driver.once.Do(func() {
		if msg := C.em_load(); msg != nil {
			driver.err = fmt.Errorf("%w: dlopen libcuda.so.1: %s", ErrNoDriver, C.GoString(msg))
			return
		}
		if r := C.em_init(); r != 0 {
			driver.err = fmt.Errorf("%w: %v", ErrNoDriver, cuErr("cuInit", "", r))
		}
	})
	return driver.err
}

// errUnsupportedPTX is CUDA_ERROR_UNSUPPORTED_PTX_VERSION: a PTX ISA newer than the
// driver's compiler (the committed PTX's 9.0 needs a CUDA 13 driver, R580 or later).
const errUnsupportedPTX = 222

// cuErr names the failing call (and the kernel, when there is one) and the CUDA error.
func cuErr(call, kernel string, r C.CUresult) error {
	name := C.GoString(C.em_error_name(r))
	if kernel != "" {
		return fmt.Errorf("cuda: %s(%s): %s (%d)", call, kernel, name, int(r))
	}
	return fmt.Errorf("cuda: %s: %s (%d)", call, name, int(r))
}

// Device describes a GPU.
type Device struct {
	Ordinal      int
	Name         string
	Memory       uint64 // bytes
	Major, Minor int    // compute capability
	SMs          int
	SmemOptin    int // the most shared memory a block may be given (bytes; Hopper 227 KiB, A100 163, RTX 30/40 99)
}

// Devices lists the GPUs the driver sees; the error wraps ErrNoDriver when the driver
// cannot be loaded or sees none.
func Devices() ([]Device, error) {
	if err := loadDriver(); err != nil {
		return nil, err
	}
	var n C.int
	if r := C.em_device_count(&n); r != 0 {
		return nil, fmt.Errorf("%w: %v", ErrNoDriver, cuErr("cuDeviceGetCount", "", r))
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: the driver sees no GPU", ErrNoDriver)
	}
	out := make([]Device, 0, int(n))
	for i := 0; i < int(n); i++ {
		var (
			d                 C.CUdevice
			name              [256]C.char
			mem               C.size_t
			major, minor, sms C.int
			smem              C.int
		)
		if r := C.em_device(C.int(i), &d, &name[0], 256, &mem, &major, &minor, &sms, &smem); r != 0 {
			return nil, cuErr("cuDeviceGet", "", r)
		}
		out = append(out, Device{Ordinal: i, Name: C.GoString(&name[0]), Memory: uint64(mem),
			Major: int(major), Minor: int(minor), SMs: int(sms), SmemOptin: int(smem)})
	}
	return out, nil
}

// Available reports whether the driver loads and sees a GPU.
func Available() bool {
	d, err := Devices()
	return err == nil && len(d) > 0
}

// ctxHandle is a retained primary context of one device.
type ctxHandle struct {
	dev C.CUdevice
	ctx C.CUcontext
}

func retain(ordinal int) (*ctxHandle, error) {
	var d C.CUdevice
	var name [8]C.char
	var mem C.size_t
	var a, b, c, e C.int
	if r := C.em_device(C.int(ordinal), &d, &name[0], 8, &mem, &a, &b, &c, &e); r != 0 {
		return nil, cuErr("cuDeviceGet", "", r)
	}
	h := &ctxHandle{dev: d}
	if r := C.em_ctx_retain(d, &h.ctx); r != 0 {
		return nil, cuErr("cuDevicePrimaryCtxRetain", "", r)
	}
	return h, nil
}

func (h *ctxHandle) release() error {
	if r := C.em_ctx_release(h.dev); r != 0 {
		return cuErr("cuDevicePrimaryCtxRelease", "", r)
	}
	return nil
}

func (h *ctxHandle) sync() C.CUresult { return C.em_sync(h.ctx) }

func (h *ctxHandle) alloc(n int) (uint64, error) {
	var p C.CUdeviceptr
	if r := C.em_alloc(h.ctx, &p, C.size_t(n)); r != 0 {
		return 0, cuErr("cuMemAlloc", "", r)
	}
	return uint64(p), nil
}

// memInfo returns the device's free and total memory in bytes.
func (h *ctxHandle) memInfo() (free, total int, err error) {
	var f, t C.size_t
	if r := C.em_mem_info(h.ctx, &f, &t); r != 0 {
		return 0, 0, cuErr("cuMemGetInfo", "", r)
	}
	return int(f), int(t), nil
}

func (h *ctxHandle) free(p uint64) error {
	if r := C.em_free(h.ctx, C.CUdeviceptr(p)); r != 0 {
		return cuErr("cuMemFree", "", r)
	}
	return nil
}

func (h *ctxHandle) htod(dst uint64, src unsafe.Pointer, n int) error {
	if r := C.em_htod(h.ctx, C.CUdeviceptr(dst), src, C.size_t(n)); r != 0 {
		return cuErr("cuMemcpyHtoD", "", r)
	}
	return nil
}

// htodAsync queues a copy of n bytes from pinned host memory src (hostAlloc) on the
// default stream, after the work launched before it.
func (h *ctxHandle) htodAsync(dst uint64, src unsafe.Pointer, n int) error {
	if r := C.em_htod_async(h.ctx, C.CUdeviceptr(dst), src, C.size_t(n)); r != 0 {
		return cuErr("cuMemcpyHtoDAsync", "", r)
	}
	return nil
}

// dtohAsync queues a copy of n bytes to pinned host memory dst (hostAlloc) on the
// default stream, after the work launched before it; dst holds them after a sync.
func (h *ctxHandle) dtohAsync(dst unsafe.Pointer, src uint64, n int) error {
	if r := C.em_dtoh_async(h.ctx, dst, C.CUdeviceptr(src), C.size_t(n)); r != 0 {
		return cuErr("cuMemcpyDtoHAsync", "", r)
	}
	return nil
}

// hostAlloc allocates n bytes of pinned host memory.
func (h *ctxHandle) hostAlloc(n int) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	if r := C.em_host_alloc(h.ctx, &p, C.size_t(n)); r != 0 {
		return nil, cuErr("cuMemAllocHost", "", r)
	}
	return p, nil
}

func (h *ctxHandle) hostFree(p unsafe.Pointer) error {
	if r := C.em_host_free(h.ctx, p); r != 0 {
		return cuErr("cuMemFreeHost", "", r)
	}
	return nil
}

func (h *ctxHandle) dtoh(dst unsafe.Pointer, src uint64, n int) error {
	if r := C.em_dtoh(h.ctx, dst, C.CUdeviceptr(src), C.size_t(n)); r != 0 {
		return cuErr("cuMemcpyDtoH", "", r)
	}
	return nil
}

func (h *ctxHandle) dtod(dst, src uint64, n int) error {
	if r := C.em_dtod(h.ctx, C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(n)); r != 0 {
		return cuErr("cuMemcpyDtoD", "", r)
	}
	return nil
}

// module is a loaded PTX module and its kernels by name.
type module struct {
	name string
	mod  C.CUmodule
	pdl  map[string]bool // kernels that wait for the one before (pdlKernels)
}

func (h *ctxHandle) loadModule(name string, ptx []byte) (*module, error) {
	return h.loadImage(name, ptx, ptx)
}

// loadImage loads module name from image, its PTX or the machine code made from ptx (which
// says which of its kernels wait on the grid before them).
func (h *ctxHandle) loadImage(name string, image, ptx []byte) (*module, error) {
	m := &module{name: name, pdl: pdlKernels(ptx)}
	if r := C.em_module_load(h.ctx, &m.mod, unsafe.Pointer(&image[0])); r != 0 {
		what := name + ".ptx"
		if &image[0] != &ptx[0] {
			what = name + ".cubin"
		}
		err := cuErr("cuModuleLoadData", what, r)
		if r == errUnsupportedPTX {
			err = fmt.Errorf("%w: the NVIDIA driver is older than the kernels' PTX (ISA %s) needs; update the driver", err, ptxISA(ptx))
		}
		return nil, err
	}
	return m, nil
}

func (h *ctxHandle) unload(m *module) error {
	if r := C.em_module_unload(h.ctx, m.mod); r != 0 {
		return cuErr("cuModuleUnload", m.name+".ptx", r)
	}
	return nil
}

// global is the address and size of m's __device__ variable name (the timeline's).
func (h *ctxHandle) global(m *module, name string) (uint64, int, error) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var p C.CUdeviceptr
	var n C.size_t
	if r := C.em_global(h.ctx, &p, &n, m.mod, cs); r != 0 {
		return 0, 0, cuErr("cuModuleGetGlobal", m.name+".ptx: "+name, r)
	}
	return uint64(p), int(n), nil
}

// kernel is one __global__ function.
type kernel struct {
	name string
	fn   C.CUfunction
	pdl  bool    // it starts with griddepcontrol.wait: it may follow a programmatic edge
	mod  *module // the module that holds it
}

func (m *module) function(name string) (*kernel, error) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	k := &kernel{name: name, pdl: m.pdl[name], mod: m}
	if r := C.em_function(&k.fn, m.mod, cs); r != 0 {
		return nil, cuErr("cuModuleGetFunction", name, r)
	}
	return k, nil
}

// maxDynamicSmem raises k's dynamic shared memory limit to n bytes.
func (h *ctxHandle) maxDynamicSmem(k *kernel, n int) error {
	if r := C.em_max_dynamic_smem(h.ctx, k.fn, C.int(n)); r != 0 {
		return cuErr("cuFuncSetAttribute", k.name, r)
	}
	return nil
}

// carveout sets k's preferred shared memory carveout to pct per cent.
func (h *ctxHandle) carveout(k *kernel, pct int) error {
	if r := C.em_carveout(h.ctx, k.fn, C.int(pct)); r != 0 {
		return cuErr("cuFuncSetAttribute", k.name, r)
	}
	return nil
}

// launch enqueues k on the default stream with one 8-byte slot per parameter.
func (h *ctxHandle) launch(k *kernel, gx, gy, gz, bx, smem int, args []uint64) error {
	if gx <= 0 || gy <= 0 || gz <= 0 {
		return nil // nothing to do
	}
	if r := C.em_launch(h.ctx, k.fn, C.uint(gx), C.uint(gy), C.uint(gz), C.uint(bx), C.uint(smem),
		(*C.uint64_t)(unsafe.Pointer(&args[0])), C.int(len(args))); r != 0 {
		return cuErr("cuLaunchKernel", k.name, r)
	}
	return nil
}
