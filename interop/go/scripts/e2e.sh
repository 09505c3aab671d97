#!/usr/bin/env bash
# End-to-end: gopeer serve <-> gopeer call for every scenario, streaming and
# unary (v0 path). Writes transcripts to ${OUT:-/tmp/gopeer-e2e}/.
set -u
cd "$(dirname "$0")/.."
BIN=./bin/gopeer
OUT=${OUT:-/tmp/gopeer-e2e}
PORT=${PORT:-18720}
mkdir -p "$OUT"
fail=0
for sc in $($BIN scenarios | cut -f1); do
  extra=""
  [ "$sc" = error ] && extra="--structured-errors"
  for mode in stream no-stream; do
    PORT=$((PORT+1))
    $BIN serve --scenario "$sc" --addr 127.0.0.1:$PORT $extra >"$OUT/$sc.$mode.serve.out" 2>"$OUT/$sc.$mode.serve.err" &
    spid=$!
    for _ in $(seq 50); do grep -q READY "$OUT/$sc.$mode.serve.out" 2>/dev/null && break; sleep 0.1; done
    if $BIN call --url http://127.0.0.1:$PORT/ --message "hi" --$mode --user u-$sc --session s-$sc \
        >"$OUT/$sc.$mode.call.jsonl" 2>"$OUT/$sc.$mode.call.err"; then rc=0; else rc=$?; fi
    kill $spid; wait $spid 2>/dev/null
    n=$(wc -l <"$OUT/$sc.$mode.call.jsonl")
    tp=$(grep -c '"traceparent":"00-' "$OUT/$sc.$mode.serve.err")
    uid=$(grep -c "\"x_user_id\":\"u-$sc\"" "$OUT/$sc.$mode.serve.err")
    printf '%-15s %-9s rc=%s events=%-4s traceparent_reqs=%s x_user_id_reqs=%s\n' "$sc" "$mode" "$rc" "$n" "$tp" "$uid"
    [ "$rc" = 0 ] && [ "$n" -gt 0 ] && [ "$tp" -gt 0 ] && [ "$uid" -gt 0 ] || fail=1
  done
done
# cancellation: client cancels after 8 events; the server run must end canceled.
PORT=$((PORT+1))
$BIN serve --scenario long --addr 127.0.0.1:$PORT >"$OUT/cancel.serve.out" 2>"$OUT/cancel.serve.err" &
spid=$!
for _ in $(seq 50); do grep -q READY "$OUT/cancel.serve.out" 2>/dev/null && break; sleep 0.1; done
$BIN call --url http://127.0.0.1:$PORT/ --stream --cancel-after 8 >"$OUT/cancel.call.jsonl" 2>"$OUT/cancel.call.err"
sleep 1
kill $spid; wait $spid 2>/dev/null
if grep -q '"canceled":true' "$OUT/cancel.serve.err" && grep -q model_canceled "$OUT/cancel.serve.err"; then
  echo "cancel          stream    server run_end canceled=true"
else
  echo "cancel          FAILED (server run not canceled)"; fail=1
fi
exit $fail
