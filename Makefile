# Parley's build. `make test` is what CI runs (.ci/run); nothing here needs a global install
# beyond Go, npm and, for the tests, a Postgres server program (or PARLEY_TEST_POSTGRES).

GO ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)

# Parley builds and tests with Go 1.27.3. The machine's go command fetches that release from
# the Go module proxy on first use (about 76 MB, once per machine) and runs it for every Go
# command below. Go 1.26.8 has ten known vulnerabilities that Parley's code reaches (net/http,
# crypto/tls, crypto/x509, net/textproto; `make vulncheck` lists them), fixed only in newer
# releases. Outside make, export the same variable (README, "Building").
export GOTOOLCHAIN := go1.27.3
NPM ?= npm

# Runs a command beside one throwaway Postgres shared by all test packages. Built, not
# `go run`: a signal to `go run` would not reach it, and the cluster would outlive make.
WITH_POSTGRES := bin/with-postgres

# When make started, for the time the whole `make test` took, installs and builds included.
STARTED := $(shell date +%s)

# The version the binary reports: the nearest tag and commit, or "dev" outside a checkout.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

# Browser libraries copied out of node_modules (versions pinned in package-lock.json).
VENDORED := static/vendor/htmx.min.js static/vendor/htmx-ext-sse.min.js

.DEFAULT_GOAL := build
.PHONY: build run test resources bench generate assets tools pgbouncer python3 graphviz fmt clean load load-memory load-sqlite soak curves screenshots vulncheck

# Extra flags of parley-load for the load targets, last so that they win, e.g.
# make load LOAD_ARGS="--duration 90s --agents 32" (docs/performance.md, "The load tool").
LOAD_ARGS ?=

# The Go vulnerability database that govulncheck reads, built from this version of its source
# module (golang.org/x/vulndb) fetched through the Go module proxy: vuln.go.dev need not be
# reachable, and every run checks against the same data. docs/reliability.md says how to
# move it forward.
VULNDB_VERSION := v0.0.0-20261105234957-e22db6528018
VULNDB := bin/vulndb

## build: bin/parley, with the assets embedded
build: assets generate
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o bin/parley ./cmd/parley

## run: build, then serve on 127.0.0.1:8080 with the default SQLite database
run: build
	./bin/parley serve

# SQLite's C code translated to Go (modernc.org/sqlite/lib) is compiled without the race
# detector's instrumentation, as a cgo SQLite's C would be: the detector still checks every
# Go package, Parley's and the driver's, and sees SQLite's locks (they are sync.Mutex, whose
# Lock and Unlock tell it). Instrumented, SQLite's own loads and stores made a test on SQLite
# about 1.6 times slower (docs/testing.md). In GOFLAGS, so that the parley binaries the tests
# build (tests/parleybin) are built the same way.
TEST_GOFLAGS := -gcflags=modernc.org/sqlite/lib=-race=false

## test: every test, with the race detector, on SQLite and Postgres; then govulncheck.
## A package may take 20 minutes, not go test's 10: the longest, tests/browser, takes about 9
## within make test on the 2-core machine, and more on one that runs other builds beside it
test: assets tools pgbouncer python3 graphviz
	@status=0; $(WITH_POSTGRES) -- env GOFLAGS="$(TEST_GOFLAGS)" $(GO) test -race -count=1 -timeout 20m ./... || status=$$?; \
	$(MAKE) --no-print-directory vulncheck || { echo "make test: govulncheck FAILED: see the vulnerabilities above" >&2; status=1; }; \
	echo "make test: $$([ $$status = 0 ] && echo passed || echo FAILED) in $$(( $$(date +%s) - $(STARTED) ))s"; \
	exit $$status

## resources: the resource matrix of PROTOCOL.md § 19 (tests/resources, build tag resources):
## every route and MCP tool against a real parley serve on both databases (5–7 minutes); not
## yet part of make test (docs/reliability.md, "The resource matrix")
resources: assets tools
	$(WITH_POSTGRES) -- env GOFLAGS="$(TEST_GOFLAGS)" $(GO) test -tags resources -race -count=1 -timeout 30m ./tests/resources/

## vulncheck: govulncheck over every package, against the pinned vulnerability database;
## fails when the code reaches a known vulnerability (in a module or the standard library)
vulncheck:
	GO=$(GO) $(GO) run ./tests/vulncheck/vulndb -version $(VULNDB_VERSION) -out $(VULNDB)
	$(GO) tool govulncheck -db file://$(CURDIR)/$(VULNDB) ./...

## bench: every benchmark, on SQLite and Postgres
bench: assets tools
	$(WITH_POSTGRES) -- $(GO) test -run '^$$' -bench . -benchmem ./...

## load: the headline measurement: 16 agents over HTTP, over MCP, the same sends' rows by
## pgbench and the minimal forum post by pgbench, in 3 alternating rounds on a throwaway durable Postgres; prints the medians, the
## ratios, latency per operation, CPU and statements per send and the server's memory as Markdown (LOAD_ARGS to change it)
load: build
	$(GO) build -o bin/parley-load ./cmd/parley-load
	./bin/parley-load --launch bin/parley --agents 16 --duration 30s --rounds 3 --modes http,mcp,pgbench,minimal $(LOAD_ARGS)

## load-memory: the memory target: 64 agents, a mixed workload over HTTP and MCP in turns for
## 5 minutes, the server's resident memory sampled every second
load-memory: build
	$(GO) build -o bin/parley-load ./cmd/parley-load
	./bin/parley-load --launch bin/parley --agents 64 --modes http,mcp --mix mixed --duration 150s --rounds 5 $(LOAD_ARGS)

## load-sqlite: the SQLite server against its direct-driver baseline, 4 agents (LOAD_ARGS="--agents 1" for one)
load-sqlite: build
	$(GO) build -o bin/parley-load ./cmd/parley-load
	./bin/parley-load --launch bin/parley --launch-db sqlite --agents 4 --duration 30s --rounds 3 --modes http,mcp,direct $(LOAD_ARGS)

## soak: minutes of mixed agents over HTTP and MCP while Postgres restarts, the server is
## killed and clients walk away, then the consistency check and the server's memory
## (docs/reliability.md). Not part of `make test`, which runs a short one. Settings:
## SOAK_DURATION (10m), SOAK_AGENTS (16), SOAK_DB (postgres or sqlite), SOAK_FLAGS (more flags)
SOAK_DURATION ?= 10m
SOAK_AGENTS ?= 16
SOAK_DB ?= postgres
soak: build
	$(GO) build -o bin/parley-soak ./cmd/parley-soak
	bin/parley-soak --parley bin/parley --duration $(SOAK_DURATION) --agents $(SOAK_AGENTS) --db $(SOAK_DB) $(SOAK_FLAGS)

## curves: the scale curves in docs/curves (forums of 10k, 100k and 1M messages on SQLite and a
## throwaway Postgres; 11–21 minutes on the shared 2-core machine); CURVES_FLAGS="--sizes …" for others
curves:
	$(GO) build -o bin/parley-curves ./cmd/parley-curves
	bin/parley-curves --out docs/curves $(CURVES_FLAGS)

## screenshots: the main pages wide and on a phone, in English and German, taken by the
## browser tests on SQLite (every scenario, so that the pages show what a whole run leaves)
## into tests/browser/screenshots and rewritten in the 256 colours each uses most: to look
## at after a change to the pages, and to copy into docs/screenshots (about 5 minutes)
screenshots: assets tools
	rm -rf tests/browser/screenshots
	$(WITH_POSTGRES) -- $(GO) test -count=1 -run 'TestPages/sqlite' ./tests/browser/
	$(GO) run ./tests/browser/palette tests/browser/screenshots/*.png

## generate: the Go code of the templ files
generate:
	$(GO) tool templ generate -path .

## assets: the vendored browser libraries in static/vendor
assets: $(VENDORED)

# npm ci replaces node_modules wholesale; the stamp records that it ran for this lock file.
node_modules/.installed: package.json package-lock.json
	$(NPM) ci --ignore-scripts --no-audit --no-fund
	touch $@

static/vendor/htmx.min.js: node_modules/.installed
	cp node_modules/htmx.org/dist/htmx.min.js $@

static/vendor/htmx-ext-sse.min.js: node_modules/.installed
	cp node_modules/htmx-ext-sse/dist/sse.min.js $@

## tools: the programs the tests run
tools:
	$(GO) build -o $(WITH_POSTGRES) ./storage/storagetest/cmd/with-postgres

## pgbouncer: Debian's pgbouncer, which tests/pgbouncer starts in front of the test Postgres;
## installed with apt-get when missing and make runs as root, else make stops and says so
pgbouncer:
	@$(call debian_package,pgbouncer,command -v pgbouncer || test -x /usr/sbin/pgbouncer)

## python3: Debian's python3, with which the tests run the researchers' worked example
## (docs/examples/dataset.py, standard library only); installed with apt-get when missing and
## make runs as root, else make stops and says so
python3:
	@$(call debian_package,python3,command -v python3)

## graphviz: Debian's graphviz, whose dot the graph tests run to check that Parley's DOT export
## draws (graph/dot_drawing_test.go); installed with apt-get when missing and make runs as
## root, else make stops and says so
graphviz:
	@$(call debian_package,graphviz,command -v dot)

# debian_package installs Debian's package $(1) with apt-get unless the check $(2) finds it;
# when make is not root (or there is no apt-get) it stops and says what to install.
define debian_package
( $(2) ) >/dev/null 2>&1 || { \
  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
    echo "make: installing $(1) with apt-get"; \
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(1) >/dev/null; \
  else \
    echo "make: $(1) is missing and make is not root: install it (apt-get install $(1))" >&2; exit 1; \
  fi; }
endef

## fmt: format the Go and templ sources
fmt:
	$(GO) fmt ./...
	$(GO) tool templ fmt .

## clean: remove what the build made (never the data in parley-data/)
clean:
	rm -rf bin node_modules $(VENDORED)
