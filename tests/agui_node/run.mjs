// Runs @ag-ui/client's HttpAgent against an AG-UI URL and prints a JSON summary.
//
//   node run.mjs URL [USER_TEXT]
//
// AGUI_HEADERS (JSON) replaces the request headers (e.g. an Authorization header).
//
// The client's own pipeline (schema parsing, event verification, event application)
// rejects any protocol violation; such a rejection is reported as "error" and exit code 1.
import { HttpAgent } from "@ag-ui/client";

const [url, text = "hello"] = process.argv.slice(2);
if (!url) {
  console.error("usage: node run.mjs URL [USER_TEXT]");
  process.exit(2);
}

const warnings = [];
// The client reports inconsistencies it tolerates (unknown ids, failed patches) as
// console warnings: collect them so the caller can assert there are none.
console.warn = (...args) => warnings.push(args.map(String).join(" "));

const agent = new HttpAgent({
  url,
  threadId: "thread-node",
  headers: process.env.AGUI_HEADERS ? JSON.parse(process.env.AGUI_HEADERS) : { "X-User-ID": "node-user" },
  initialMessages: [{ id: "user-1", role: "user", content: text }],
  initialState: {},
});

const events = [];
let error = null;
try {
  await agent.runAgent(
    { runId: "run-node" },
    {
      onEvent: ({ event }) => {
        events.push(event);
      },
      onRunFailed: ({ error: failure }) => {
        error = String(failure?.message ?? failure);
      },
    },
  );
} catch (failure) {
  error ??= String(failure?.message ?? failure);
}

const ids = (key) => [...new Set(events.map((e) => e[key]).filter((v) => v !== undefined))];
console.log(
  JSON.stringify({
    ok: error === null,
    error,
    warnings,
    types: events.map((e) => e.type),
    messageIds: ids("messageId"),
    toolCallIds: ids("toolCallId"),
    runError: events.find((e) => e.type === "RUN_ERROR")?.message ?? null,
    messages: agent.messages,
    state: agent.state,
  }),
);
process.exit(error === null ? 0 : 1);
