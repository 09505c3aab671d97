// Command gopeer is the trpc-agent-go interop peer of trpc-a2a-bridge.
//
//	gopeer serve  --scenario NAME --addr HOST:PORT [--structured-errors] [--name N]
//	gopeer call   --url URL --message TEXT [--stream|--no-stream] [--user ID] [--session ID] [--cancel-after N]
//	gopeer agui   --upstream URL --addr HOST:PORT
//	gopeer events --scenario NAME            (in-process runner events, for differential tests)
//	gopeer scenarios                         (list scenario names)
package main

import (
	"fmt"
	"os"
)

func usage() {
	fmt.Fprintln(os.Stderr, "usage: gopeer serve|call|agui|events|scenarios [flags]  (gopeer CMD -h for flags)")
}

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = cmdServe(os.Args[2:])
	case "call":
		err = cmdCall(os.Args[2:])
	case "agui":
		err = cmdAGUI(os.Args[2:])
	case "events":
		err = cmdEvents(os.Args[2:])
	case "scenarios":
		for _, n := range scenarioNames() {
			fmt.Printf("%s\t%s\n", n, scenarios[n].Description)
		}
	default:
		usage()
		os.Exit(2)
	}
	if err != nil {
		logJSON(map[string]any{"log": "fatal", "error": err.Error()})
		os.Exit(1)
	}
}
