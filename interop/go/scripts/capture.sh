#!/usr/bin/env bash
# Regenerates the recorded vectors under testdata/ (v0 path):
#   testdata/events/<scenario>.jsonl          in-process runner events (gopeer events)
#   testdata/call_v0/<scenario>.<mode>.jsonl  events yielded by A2AAgent calling gopeer serve
#   testdata/sse_v0/<scenario>.sse            raw message/stream SSE of gopeer serve
#   testdata/tool_stream_v0.sse               = sse_v0/tool.sse (golden vector)
#   testdata/tool_send_v0.json                raw message/send response, tool scenario
# Random parts (task ids, timestamps, message ids, runner-completion ids) differ run to run.
set -eu
cd "$(dirname "$0")/.."
BIN=./bin/gopeer
PORT=${PORT:-18800}
mkdir -p testdata/events testdata/call_v0 testdata/sse_v0
req() { # method id
  printf '{"jsonrpc":"2.0","id":"req-1","method":"%s","params":{"message":{"kind":"message","messageId":"msg-golden-1","role":"user","contextId":"ctx-golden-1","parts":[{"kind":"text","text":"What is the weather in Beijing?"}]}}}' "$1"
}
for sc in $($BIN scenarios | cut -f1); do
  $BIN events --scenario "$sc" >testdata/events/$sc.jsonl 2>/dev/null
  extra=""; [ "$sc" = error ] && extra="--structured-errors"
  PORT=$((PORT+1))
  $BIN serve --scenario "$sc" --addr 127.0.0.1:$PORT $extra >/tmp/capture.serve.out 2>/dev/null &
  spid=$!
  for _ in $(seq 50); do grep -q READY /tmp/capture.serve.out 2>/dev/null && break; sleep 0.1; done
  for mode in stream no-stream; do
    $BIN call --url http://127.0.0.1:$PORT/ --message hi --$mode --user golden-user --session golden-session \
      >testdata/call_v0/$sc.$mode.jsonl 2>/dev/null
  done
  curl -sN -X POST http://127.0.0.1:$PORT/ -H 'Content-Type: application/json' -H 'X-User-ID: golden-user' \
    -d "$(req message/stream)" >testdata/sse_v0/$sc.sse
  if [ "$sc" = tool ]; then
    cp testdata/sse_v0/tool.sse testdata/tool_stream_v0.sse
    curl -s -X POST http://127.0.0.1:$PORT/ -H 'Content-Type: application/json' -H 'X-User-ID: golden-user' \
      -d "$(req message/send)" >testdata/tool_send_v0.json
  fi
  kill $spid; wait $spid 2>/dev/null || true
done
ls -la testdata testdata/*/ | head -60
