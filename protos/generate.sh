#!/usr/bin/env bash
# Generates the code of protos/ into OUT (default: this repository):
#   OUT/bridge/v1/agent_pb2.py, agent_pb2.pyi, agent_pb2_grpc.py
#       grpcio-tools' protoc (the version pinned in pyproject.toml); the proto package
#       trpc_bridge.v1 is the import package trpc_bridge.v1, i.e. the folder bridge/v1.
#   OUT/interop/agenthost/trpcbridgev1/agent.pb.go, agent_grpc.pb.go
#       the same protoc with protoc-gen-go and protoc-gen-go-grpc (versions below, built
#       from the Go module proxy into build/go-bin); skipped when `go` is not on PATH.
# `make protos` writes into the repository; `make lint` runs `generate.sh --check`, which
# generates into a temporary folder and fails when the committed files differ (stale code).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="$(realpath -ms "${PYTHON:-$ROOT/.venv/bin/python}")"
export PYTHON
if [ "${1:-}" = "--check" ]; then
	fresh="$(mktemp -d)"
	trap 'rm -rf "$fresh"' EXIT
	"$0" "$fresh"
	status=0
	for dir in bridge/v1 interop/agenthost/trpcbridgev1; do
		[ -d "$fresh/$dir" ] || continue
		for file in "$fresh/$dir"/*; do
			diff -q "$file" "$ROOT/$dir/$(basename "$file")" >/dev/null 2>&1 || {
				echo "stale generated code: $dir/$(basename "$file") (run make protos)" >&2
				status=1
			}
		done
	done
	exit "$status"
fi
OUT="$(realpath -m "${1:-$ROOT}")"
PROTOC_GEN_GO=google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
PROTOC_GEN_GO_GRPC=google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
GO_MODULE=trpcbridge/interop/agenthost
PROTO=trpc_bridge/v1/agent.proto

cd "$ROOT/protos"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT

"$PYTHON" -m grpc_tools.protoc -I . --python_out="$stage" --pyi_out="$stage" \
	--grpc_python_out="$stage" "$PROTO"
mkdir -p "$OUT/bridge/v1"
cp "$stage"/trpc_bridge/v1/agent_pb2.py "$stage"/trpc_bridge/v1/agent_pb2.pyi \
	"$stage"/trpc_bridge/v1/agent_pb2_grpc.py "$OUT/bridge/v1/"

if ! command -v go >/dev/null 2>&1; then
	echo "go not found: Go code of protos/ not generated" >&2
	exit 0
fi
if [ -z "${HOME:-}" ]; then # Go derives its caches from HOME; keep them in the tree instead
	export GOCACHE="${GOCACHE:-$ROOT/build/go-cache}" GOPATH="${GOPATH:-$ROOT/build/go-path}"
fi
export GOBIN="$ROOT/build/go-bin"
[ -x "$GOBIN/protoc-gen-go" ] || go install "$PROTOC_GEN_GO"
[ -x "$GOBIN/protoc-gen-go-grpc" ] || go install "$PROTOC_GEN_GO_GRPC"
mkdir -p "$OUT/interop/agenthost"
PATH="$GOBIN:$PATH" "$PYTHON" -m grpc_tools.protoc -I . \
	--go_out="$OUT/interop/agenthost" --go_opt=module="$GO_MODULE" \
	--go_opt="M$PROTO=$GO_MODULE/trpcbridgev1;trpcbridgev1" \
	--go-grpc_out="$OUT/interop/agenthost" --go-grpc_opt=module="$GO_MODULE" \
	--go-grpc_opt="M$PROTO=$GO_MODULE/trpcbridgev1;trpcbridgev1" \
	"$PROTO"
