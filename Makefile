# Ember: `make run` opens the app, `make test` runs every check. Both set up a fresh
# Debian/Ubuntu machine first (build/deps.sh: apt packages for Fyne's cgo build, Go modules).

export PATH := /usr/local/go/bin:$(PATH)
export CGO_ENABLED := 1
GO ?= go

.PHONY: run test deps test-deps build build-nogui vet fmt-check fuzz package

deps:
	./build/deps.sh

test-deps:
	./build/deps.sh --test

build: deps
	$(GO) build -o ember .

build-nogui:
	$(GO) build -tags nogui -o ember .

run: build
	./ember

vet:
	$(GO) vet ./...
	$(GO) vet -tags nogui ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "not gofmt'ed:"; echo "$$out"; exit 1; fi

test: test-deps fmt-check vet
	$(GO) build -tags nogui ./...
	CC=clang $(GO) build ./kernels/cpu/ # the kernels' C with clang too (macOS's compiler)
	./build/test-arm64.sh # the NEON kernels, cross-compiled and run under qemu
	EMBER_REQUIRE_CLIENTS=1 $(GO) test -timeout 20m ./...

# Run each fuzz target for FUZZTIME (default 1m).
FUZZTIME ?= 1m
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./inference/gguf

# A Linux bundle (Ember.tar.xz: the binary, a .desktop entry and the icon, with a
# Makefile whose `make install` puts them under /usr/local), built by Fyne's packager
# from FyneApp.toml. On macOS and Windows the same command with --os darwin / windows
# makes Ember.app / Ember.exe (see the README).
FYNE_TOOLS ?= fyne.io/tools/cmd/fyne@v1.7.4
package: deps
	$(GO) run $(FYNE_TOOLS) package --os linux --release
	git checkout -- FyneApp.toml 2>/dev/null || true
