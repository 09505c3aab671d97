# Two commands on a fresh clone: `make run` and `make test`. Everything else is a helper.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.stamp-install
HOST ?= 127.0.0.1
PORT ?= 8080
GRPC_PORT ?= 50051

.PHONY: install run test lint typecheck pytest chromium db-servers bench interop peers conformance conformance-must protos agenthost clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ required"'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/trpc-bridge serve --agent demo --host $(HOST) --port $(PORT) --grpc-port $(GRPC_PORT)

# mypy cannot follow the package-dir mapping of an editable install, so it checks a tree
# of symlinks laid out as the import package (trpc_bridge/{codecs,telemetry}). The tree is
# rebuilt each time; mypy's cache beside it (build/typecheck/.mypy_cache) is kept.
typecheck: $(STAMP)
	@rm -rf build/typecheck/trpc_bridge && mkdir -p build/typecheck/trpc_bridge
	@for f in bridge/*; do ln -s ../../../$$f build/typecheck/trpc_bridge/; done
	@ln -s ../../../codecs build/typecheck/trpc_bridge/codecs
	@ln -s ../../../telemetry build/typecheck/trpc_bridge/telemetry
	cd build/typecheck && ../../$(BIN)/mypy --config-file ../../pyproject.toml -p trpc_bridge
	MYPYPATH=build/typecheck $(BIN)/mypy --config-file pyproject.toml \
		--exclude '^tests/conftest\.py$$' tests $(wildcard bench/*.py)
	@# tests/conftest.py and tests/interop/conftest.py are both module `conftest` to mypy.
	MYPYPATH=build/typecheck:tests $(BIN)/mypy --config-file pyproject.toml tests/conftest.py

lint: $(STAMP)
	$(BIN)/ruff check bridge codecs telemetry tests bench interop/python
	$(BIN)/ruff format --check bridge codecs telemetry tests bench interop/python
	$(MAKE) --no-print-directory typecheck
	PYTHON=$(abspath $(BIN)/python) protos/generate.sh --check

# The code generated from protos/ (Python in bridge/v1, Go in interop/agenthost/trpcbridgev1;
# the Go part needs `go`): committed, and checked for staleness by `make lint`.
protos: $(STAMP)
	PYTHON=$(abspath $(BIN)/python) protos/generate.sh

# What the suite needs installed; `make test` builds these side by side (-j).
TEST_NEEDS := $(STAMP) tests/agui_node/node_modules tests/acp_node/node_modules \
	tests/oidc_node/node_modules chromium db-servers peers

# The suite in parallel pytest-xdist workers (docs/testing.md): a test of an xdist_group
# runs in the same worker as the rest of its group; the ten slowest tests are printed last.
# The workers mostly wait (on servers, peers, subprocesses), so there are more than cores.
# TEST_WORKERS=0 runs the suite in this one process.
TEST_WORKERS ?= 4
pytest: $(TEST_NEEDS)
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup --durations=10

# Debian's Chromium for the playground's browser test (driven through Playwright's Python
# package, never its own browser downloads). Installed when missing and running as root;
# otherwise the browser test skips and says why.
CHROMIUM := /usr/bin/chromium
chromium:
	@if [ ! -x $(CHROMIUM) ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing Debian's chromium for the playground browser test"; \
			(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
				--no-install-recommends chromium chromium-driver >/dev/null) \
			|| echo "warning: apt-get could not install chromium"; \
		else echo "$(CHROMIUM) not found (and not root): the playground browser test will skip"; fi; \
	fi

# The Python agent frameworks the interop matrix runs (interop/python/), one virtualenv
# each: trpc-agent-py's `a2a` and `a2a-v1` extras cannot share an install, and neither
# can share the bridge's a2a-sdk. Rebuilt from scratch when their requirements' text
# changes (each virtualenv keeps a copy): a newer file with the same text, as in a fresh
# worktree whose build/peers links to another checkout's, only refreshes the stamp.
PEERS := build/peers
PEER_STAMPS := $(PEERS)/trpc-py/.stamp $(PEERS)/trpc-py-v1/.stamp $(PEERS)/adk/.stamp

$(PEERS)/%/.stamp: interop/python/requirements-%.txt
	@if [ -f $@ ] && cmp -s $< $(PEERS)/$*/requirements.txt; then touch $@; else \
		rm -rf $(PEERS)/$* && $(PYTHON) -m venv $(PEERS)/$* && \
		echo "building the $* peer in $(PEERS)/$*" && \
		$(PEERS)/$*/bin/python -m pip install -q --upgrade pip && \
		$(PEERS)/$*/bin/python -m pip install -q -r $< && \
		cp $< $(PEERS)/$*/requirements.txt && touch $@; fi

# The peers of other languages: the A2A JavaScript SDK (interop/js) and
# Google ADK for TypeScript (interop/adk-js) from npm, installed by `npm ci` from their
# lock files; the A2A Java SDK (interop/java) from Maven Central: Maven only resolves the
# SDK's jars (~/.m2) and writes their classpath, javac compiles the one source file to
# build/peers/java (seconds). Each is redone only when its inputs change; without its
# toolchain this warns, and the peer's cells skip saying why.
JAVA_PEER := $(PEERS)/java
$(JAVA_PEER)/.stamp: interop/java/pom.xml interop/java/src/Peer.java
	@if command -v mvn >/dev/null 2>&1 && command -v javac >/dev/null 2>&1; then \
		rm -rf $(JAVA_PEER) && mkdir -p $(JAVA_PEER)/classes && \
		mvn -q -B -f interop/java/pom.xml dependency:build-classpath \
			-Dmdep.outputFile=$(abspath $(JAVA_PEER))/classpath.txt && \
		javac -nowarn -encoding UTF-8 -d $(JAVA_PEER)/classes \
			-cp "$$(cat $(JAVA_PEER)/classpath.txt)" interop/java/src/Peer.java && \
		cp -r interop/java/src/META-INF $(JAVA_PEER)/classes/ && touch $@; \
	else echo "mvn or javac not found: the Java A2A SDK peer's cells will skip"; fi

interop/js/node_modules interop/adk-js/node_modules: %/node_modules: %/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		cd $* && npm ci --no-audit --no-fund --loglevel=error && touch node_modules; \
	else echo "npm not found: the $* peer's cells will skip"; fi

peers: $(PEER_STAMPS) $(JAVA_PEER)/.stamp interop/js/node_modules interop/adk-js/node_modules

# Debian's PostgreSQL and Redis servers for the task-store, durable-task and replica
# tests (started on loopback by the tests themselves). Installed when missing and running
# as root; otherwise those tests skip and say why.
db-servers: | chromium  # one apt-get at a time
	@if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || ! command -v redis-server >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing Debian's postgresql and redis-server for the replica tests"; \
			(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
				--no-install-recommends postgresql redis-server >/dev/null) \
			|| echo "warning: apt-get could not install postgresql / redis-server"; \
		else echo "PostgreSQL or Redis server missing (and not root): their tests will skip"; fi; \
	fi

# @ag-ui/client for the AG-UI client check; reinstalled when the lock file changes.
# Without npm this only warns (the client test itself skips when node is absent).
tests/agui_node/node_modules: tests/agui_node/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		cd tests/agui_node && npm ci --no-audit --no-fund --loglevel=error && touch node_modules; \
	else echo "npm not found: skipping tests/agui_node (AG-UI client check)"; fi

# @zed-industries/agent-client-protocol for the ACP client check of `trpc-bridge acp`.
tests/acp_node/node_modules: tests/acp_node/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		cd tests/acp_node && npm ci --no-audit --no-fund --loglevel=error && touch node_modules; \
	else echo "npm not found: skipping tests/acp_node (ACP client check)"; fi

# oidc-provider: the real OpenID provider of the authentication tests (tests/security_peers.py).
tests/oidc_node/node_modules: tests/oidc_node/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		cd tests/oidc_node && npm ci --no-audit --no-fund --loglevel=error && touch node_modules; \
	else echo "npm not found: skipping tests/oidc_node (the OpenID provider of the auth tests)"; fi

# The A2A TCK (``$$A2A_TCK_DIR``, default ../shared/a2a-tck; skipped, saying so, when absent)
# against ``serve --agent tck --strict-card``: a MUST failure fails `make test`. (The default
# card, which every 0.3 and 1.0 client reads, fails the TCK's 1.0 card schema test and only
# that one: docs/specs/a2a.md.)
conformance-must: $(STAMP)
	$(BIN)/python tests/conformance/tck_run.py --target tck --require-must --strict-card

# Installs first (side by side), then lint, the TCK and the suite side by side: the TCK
# mostly waits on its server, lint is short. Each one's output is printed whole when it
# ends (the suite, the longest, last).
test:
	@$(MAKE) --no-print-directory -j4 $(TEST_NEEDS)
	@$(MAKE) --no-print-directory -j3 --output-sync=target lint conformance-must pytest

# The cross-language matrix against trpc-agent-go (builds interop/go; needs `go`) and the
# Python frameworks (interop/python), also part of `make test`; this target prints it and
# writes docs/interop-matrix.md.
interop: $(STAMP) peers
	INTEROP_REPORT=1 $(BIN)/python -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) \
		--dist loadgroup tests/interop

# The Go AgentHost sidecar (a Go agent the bridge serves with --agent grpc://…); the tests
# build it themselves. Go's caches go under build/ when HOME is unset, as for interop/go.
agenthost:
	cd interop/agenthost && $(if $(HOME),,GOCACHE=$(CURDIR)/build/go-cache GOPATH=$(CURDIR)/build/go-path) \
		go build -o bin/agenthost .

# The TCK against every target of docs/conformance.md's table (proxy-go needs `go`),
# with the default card, then the tck agent with --strict-card.
CONFORMANCE_TARGETS ?= tck tck-auth demo proxy-go sdk-echo
conformance: $(STAMP)
	@for t in $(CONFORMANCE_TARGETS); do $(BIN)/python tests/conformance/tck_run.py --target $$t || exit 1; done
	$(BIN)/python tests/conformance/tck_run.py --target tck --strict-card

# a2a-sdk's own spans are off for every server measured (the bridge and the plain-SDK
# baseline alike): its default no-op spans cost 15-30 % and would flatter the bridge.
bench: $(STAMP) db-servers
	@for b in bench/[!_]*.py; do echo "== $$b"; \
		OTEL_INSTRUMENTATION_A2A_SDK_ENABLED=false $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build .pytest_cache .mypy_cache .ruff_cache .hypothesis
