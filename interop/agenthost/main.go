// Command agenthost is an agent written in Go that trpc-a2a-bridge serves: it implements
// the AgentHost service of protos/trpc_bridge/v1/agent.proto with a scripted weather agent
// that streams the same events as the bridge's Python demo agent (bridge/demo_agent.py),
// so `trpc-bridge serve --agent grpc://…` must look the same to every caller whichever of
// the two runs behind it. It also calls an AgentHost (the bridge's own, say) and prints
// the events.
//
//	agenthost serve [--addr HOST:PORT] [--delay D] [--first-delay D] [--die-after N]
//	                [--invalid-after N]
//	agenthost call  --target HOST:PORT --message TEXT [--user ID] [--context ID]
//	                [--cancel-after N] [--describe]
//
// serve prints "READY grpc://HOST:PORT" on stdout once it listens and one JSON line per
// run on stderr (the request, x-user-id and traceparent metadata, how the run ended).
// call prints one protojson line per event (field names as in the proto), then exits 0;
// a failed call prints {"status": CODE, "message": …} and exits 1.
package main

import (
	"encoding/json"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = cmdServe(os.Args[2:])
	case "call":
		err = cmdCall(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		logJSON(map[string]any{"log": "fatal", "error": err.Error()})
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: agenthost serve|call [flags]  (agenthost CMD -h for flags)")
	os.Exit(2)
}

// logJSON writes one JSON object per line on stderr: what the tests read.
func logJSON(fields map[string]any) {
	line, _ := json.Marshal(fields)
	fmt.Fprintln(os.Stderr, string(line))
}
