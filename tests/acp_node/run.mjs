// Starts an ACP agent (e.g. `trpc-bridge acp --agent demo`) on stdio and drives it with
// @zed-industries/agent-client-protocol's ClientSideConnection; prints a JSON summary.
//
//   node run.mjs SPEC_JSON
//
// SPEC_JSON: {"command": [...], "cwd": "...", "turns": [{"text": "...", "cancelAfterChunks": N}]}
// Every session/update goes through the library's zod schema before it reaches the client;
// answers to initialize / session/new / session/prompt are checked against the same schemas
// here. Anything rejected is listed under "violations".
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@zed-industries/agent-client-protocol";

const spec = JSON.parse(process.argv[2] ?? "{}");
if (!Array.isArray(spec.command) || spec.command.length === 0) {
  console.error("usage: node run.mjs '{\"command\": [...], \"turns\": [...]}'");
  process.exit(2);
}

const violations = [];
// The library reports messages it rejects (a notification failing its schema, say) with
// console.error and carries on: collect them.
console.error = (...args) => violations.push(args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" "));

function checked(schema, what, value) {
  const result = schema.safeParse(value);
  if (!result.success) violations.push(`${what}: ${result.error.message}`);
  return value;
}

const child = spawn(spec.command[0], spec.command.slice(1), {
  cwd: spec.cwd,
  stdio: ["pipe", "pipe", "inherit"],
});
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

let updates = [];
let onChunk = () => {};
const client = {
  async sessionUpdate(params) {
    updates.push(params);
    if (params.update.sessionUpdate === "agent_message_chunk") onChunk();
  },
  async requestPermission() {
    throw acp.RequestError.methodNotFound("session/request_permission");
  },
};
const connection = new acp.ClientSideConnection(() => client, stream);

const summary = { initialize: null, sessionId: null, turns: [], violations };
try {
  summary.initialize = checked(
    acp.initializeResponseSchema,
    "initialize",
    await connection.initialize({
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false } },
    }),
  );
  const session = checked(
    acp.newSessionResponseSchema,
    "session/new",
    await connection.newSession({ cwd: spec.cwd ?? process.cwd(), mcpServers: [] }),
  );
  summary.sessionId = session.sessionId;
  for (const turn of spec.turns ?? []) {
    updates = [];
    let chunks = 0;
    onChunk = () => {
      chunks += 1;
      if (turn.cancelAfterChunks && chunks === turn.cancelAfterChunks) {
        connection.cancel({ sessionId: session.sessionId });
      }
    };
    const record = { text: turn.text };
    try {
      const answer = await connection.prompt({
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: turn.text }],
      });
      record.stopReason = checked(acp.promptResponseSchema, "session/prompt", answer).stopReason;
    } catch (err) {
      record.error = { code: err.code, message: err.message, data: err.data };
    }
    record.updates = updates;
    summary.turns.push(record);
  }
} finally {
  child.stdin.end(); // EOF: the agent exits
}
await new Promise((resolve) => child.once("exit", resolve));
process.stdout.write(JSON.stringify(summary) + "\n");
