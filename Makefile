# hgfs build, test and benchmark entry points.
#   make demo   build, make a sample repository, serve it, clone it, show it
#   make test   install what the tests need, then run the whole suite
#   make bench  side-by-side figures against hg, tar -x and cat

GO       ?= go
BIN      := $(CURDIR)/bin
HGFS     := $(BIN)/hgfs
PKGS     := ./...
FUZZTIME ?= 10s
# BUILD_CGO is the CGO_ENABLED of the hgfs binary make builds. hgfs needs
# no C on Linux (go-fuse speaks the kernel's protocol itself; the
# cgofuse adapter is a tagged build of its own), and without cgo every
# command starts a millisecond sooner, with no dynamic loader or libc
# thread start-up: hgfs version took a median 6.1 against 7.1 ms (300
# alternated runs), hgfs update on a mount about 12. os/user then reads
# /etc/passwd and /etc/group itself (config/trust.go asks getent(1) for
# the names only other sources know) and net resolves host names itself,
# from nsswitch.conf's files and dns sources only (not mDNS's .local
# names, nor LDAP or NIS hosts: BUILD_CGO=1 make build for those).
BUILD_CGO ?= 0
DEB_PKGS := mercurial fuse3 libfuse3-dev strace curl time chromium tmux zsh

.PHONY: all deps build test test-short test-windows bench fuzz lint demo stress cross clean

all: build

# deps installs what the tests and demo need. As root it uses apt-get, and
# scripts/hg7.sh for Mercurial 7 (the suite's second oracle, from Debian
# sid); as anyone else it says what is missing. scripts/seaweedfs.sh builds
# SeaweedFS (the S3 store of the clone bundle tests) from the Go proxy.
deps:
	@missing=""; \
	command -v hg >/dev/null 2>&1 || missing="$$missing mercurial"; \
	command -v fusermount3 >/dev/null 2>&1 || missing="$$missing fuse3"; \
	[ -e /usr/include/fuse3/fuse.h ] || missing="$$missing libfuse3-dev"; \
	command -v strace >/dev/null 2>&1 || missing="$$missing strace"; \
	command -v curl >/dev/null 2>&1 || missing="$$missing curl"; \
	[ -x /usr/bin/time ] || missing="$$missing time"; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	command -v tmux >/dev/null 2>&1 || missing="$$missing tmux"; \
	command -v zsh >/dev/null 2>&1 || missing="$$missing zsh"; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing:$$missing"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
		else \
			echo "missing:$$missing"; echo "install them (e.g. sudo apt-get install$$missing) and run make again"; exit 1; \
		fi; \
	fi; \
	if [ "$$(id -u)" = 0 ]; then \
		./scripts/hg7.sh >/dev/null || exit 1; \
	elif [ ! -x "$${HGFS_HG7:-/var/cache/hgfs/sid/hg7}" ]; then \
		echo "note: Mercurial 7 is not installed; its test cases skip (as root, make deps installs it with scripts/hg7.sh)"; \
	fi; \
	GO=$(GO) ./scripts/seaweedfs.sh >/dev/null || echo "note: SeaweedFS did not build; the object store tests skip (scripts/seaweedfs.sh)"

# build makes hgfs and its S3 helper hgfs-s3, which hgfs runs from beside
# itself for the commands that reach an object store (s3bundles/helper.go
# says why it is a program of its own).
build:
	CGO_ENABLED=$(BUILD_CGO) $(GO) build -o $(HGFS) ./cmd/hgfs
	CGO_ENABLED=0 $(GO) build -o $(BIN)/hgfs-s3 ./cmd/hgfs-s3

# The whole suite under the race detector. HGFS_BIN lets tests that run the
# real binary (daemonizing mounts, crash tests) skip building it themselves.
# The cgofuse adapter (WinFsp's, run here over libfuse3) is compiled only
# with its tags on Linux; its package runs a second time with them.
# TestWineEndToEnd drives Wine and is make test-windows's (-skip keeps it
# from skipping here).
test: deps build
	HGFS_BIN=$(HGFS) $(GO) test -race -timeout 40m -count=1 -skip TestWineEndToEnd $(PKGS)
	HGFS_BIN=$(HGFS) $(GO) test -race -timeout 10m -count=1 -tags cgofuse,fuse3 ./mount/...
	HGFS_BIN=$(HGFS) $(GO) test -race -timeout 10m -count=1 -tags cgofuse,fuse3 -run 'Cgofuse|Backend' ./cmd/hgfs/

# test-windows runs the Windows build (GOOS=windows) under Wine, as root:
# the tests of the packages that need no FUSE, and hgfs.exe end to end
# against real hg (scripts/wine-test.sh; scripts/wine.sh installs Wine).
test-windows:
	GO=$(GO) ./scripts/wine-test.sh

test-short: build
	HGFS_BIN=$(HGFS) $(GO) test -short -count=1 $(PKGS)

bench: deps build
	$(GO) run ./bench -hgfs $(HGFS)

# fuzz runs every Fuzz target for FUZZTIME each (scripts/fuzz.sh says what
# counts as a finding).
fuzz:
	GO=$(GO) ./scripts/fuzz.sh $(FUZZTIME)

# lint runs go vet and staticcheck once for each build hgfs ships: Linux
# (go-fuse), Windows and macOS (without cgo, as make cross builds them),
# and Linux with the cgofuse adapter (-tags cgofuse,fuse3), which needs
# cgo, a C compiler and libfuse3's headers (make deps installs them).
# Each staticcheck run is separate, so code compiled on a platform that
# does not use it is reported (-matrix would merge that away).
# staticcheck is installed in bin/ for the host; GOOS chooses only what
# it reads.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
LINT_ENVS   := GOOS=linux GOOS=windows,CGO_ENABLED=0 GOOS=darwin,CGO_ENABLED=0

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
	$(GO) mod tidy -diff
	@command -v "$$($(GO) env CC)" >/dev/null 2>&1 && [ -e /usr/include/fuse3/fuse.h ] || \
		{ echo "lint: the cgofuse build needs a C compiler and libfuse3-dev (make deps)"; exit 1; }
	GOBIN=$(BIN) $(GO) install $(STATICCHECK)
	@for e in $(LINT_ENVS); do \
		env=$$(echo $$e | tr , ' '); \
		echo "env $$env go vet, staticcheck"; \
		env $$env $(GO) vet ./... && env $$env $(BIN)/staticcheck ./... || exit 1; \
	done
	CGO_ENABLED=1 $(GO) vet -tags cgofuse,fuse3 ./...
	CGO_ENABLED=1 $(BIN)/staticcheck -tags cgofuse,fuse3 ./...

# stress runs the cache's crash, model and index-corruption tests for many
# more rounds than make test does, the corruption campaign through a real
# mount on both adapters, and a mount's compaction under 4 GiB of churn
# with the daemon killed twelve times.
stress: build
	FSNODE_CRASH_ROUNDS=200 FSNODE_MODEL_SEEDS=2000 FSNODE_DAMAGE_RUNS=500 $(GO) test -count=1 -timeout 60m -run 'Crash|Random' ./fsnode/
	MOUNT_DAMAGE_RUNS=200 $(GO) test -count=1 -timeout 30m -run 'TestMountIndexDamage' ./mount/
	MOUNT_DAMAGE_RUNS=200 $(GO) test -count=1 -timeout 30m -tags cgofuse,fuse3 -run 'TestMountIndexDamage/cgofuse' ./mount/
	HGFS_BIN=$(HGFS) $(GO) test -count=25 -timeout 60m -run 'TestMountCrash' ./cmd/hgfs/
	HGFS_BIN=$(HGFS) HGFS_COMPACT_STRESS_MIB=4096 HGFS_COMPACT_STRESS_KILLS=12 $(GO) test -count=1 -timeout 60m -run 'TestMountCompactStress' ./cmd/hgfs/

demo: deps build
	./scripts/demo.sh $(HGFS)

# cross builds hgfs for every platform (CGO_ENABLED=0) and vets the
# Windows and macOS builds.
cross:
	./scripts/cross.sh $(BIN)/cross

clean:
	rm -rf $(BIN)
