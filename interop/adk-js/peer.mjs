// Google ADK for TypeScript (@google/adk, on @a2a-js/sdk 0.3: A2A 0.3) as an interop
// peer: its own A2A server (`toA2a(LlmAgent)`) and client (`RemoteA2AAgent` run by a
// Runner), around a scripted model. No model, no network but loopback.
//
//   node peer.mjs serve [--scenario NAME ...]   every scenario (default: all) on its own port
//   node peer.mjs client                         answers calls read from stdin
//
// As in interop/python/adk_peer.py: ADK has no LLM response id, so the scripted model
// puts the script's id in `customMetadata.llm_response_id`; each step streams its
// reasoning and text chunks as partial responses, then the complete response (or the
// error). The client prints each ADK event as interop/python/harness.py records one,
// under the response id ADK carries (`response_id`, see `record`).
import {
  BaseLlm,
  FunctionTool,
  InMemorySessionService,
  LlmAgent,
  RemoteA2AAgent,
  Runner,
  toA2a,
} from '@google/adk';
import { clientLoop, scenarioNames, scripts, serveAll } from '../js/harness.mjs';

const SCRIPTS = scripts();

/** The scripted model's step: model turns after the last user *text* turn. */
function stepIndex(contents) {
  let step = 0;
  for (const content of contents ?? []) {
    if (content.role === 'user' && (content.parts ?? []).some((p) => p.text)) step = 0;
    else if (content.role === 'model') step += 1;
  }
  return step;
}

function responses(step) {
  const response = (parts, partial) => ({
    content: { role: 'model', parts },
    partial,
    customMetadata: { llm_response_id: step.response_id },
  });
  const out = step.reasoning.map((t) => response([{ text: t, thought: true }], true));
  out.push(...step.chunks.map((t) => response([{ text: t }], true)));
  if (step.error) {
    const [errorCode, errorMessage] = step.error;
    out.push({ errorCode, errorMessage, customMetadata: { llm_response_id: step.response_id } });
    return out;
  }
  const parts = [];
  if (step.reasoning.length) parts.push({ text: step.reasoning.join(''), thought: true });
  if (step.chunks.length) parts.push({ text: step.chunks.join('') });
  parts.push(...step.calls.map((c) => ({ functionCall: { id: c.id, name: c.name, args: c.args } })));
  out.push(response(parts, false));
  return out;
}

class ScriptedLlm extends BaseLlm {
  constructor(script) {
    super({ model: 'scripted-model' });
    this.script = script;
  }

  async *generateContentAsync(request) {
    const index = Math.min(stepIndex(request.contents), this.script.steps.length - 1);
    yield* responses(this.script.steps[index]);
  }

  async connect() {
    throw new Error('the scripted model has no live mode');
  }
}

function agent(scenario) {
  const script = SCRIPTS[scenario];
  // The tool answers what the script says it answers (get_weather of scripts.py).
  const results = new Map();
  script.steps.flatMap((s) => s.calls).forEach((c) => results.set(c.args.city, c.result));
  const tools = script.tools.includes('get_weather')
    ? [
        new FunctionTool({
          name: 'get_weather',
          description: 'The weather of a city',
          parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } }, required: ['city'] },
          execute: ({ city }) => results.get(city),
        }),
      ]
    : [];
  return new LlmAgent({
    name: 'weather_agent',
    description: 'Google ADK for TypeScript interop scenario agent',
    model: new ScriptedLlm(script),
    tools,
  });
}

async function app(scenario, url) {
  const port = Number(new URL(url).port);
  return toA2a(agent(scenario), { host: '127.0.0.1', port, allowUnauthenticated: true });
}

function partRecord(part) {
  if (part.functionCall) {
    const { id, name, args } = part.functionCall;
    return { function_call: { id, name, args } };
  }
  if (part.functionResponse) {
    const { id, name, response } = part.functionResponse;
    return { function_response: { id, name, response } };
  }
  if (part.thought) return { thought: part.text ?? '' };
  return { text: part.text ?? '' };
}

function record(event) {
  // ADK mints a fresh id per event, partial pieces included; its client carries the
  // model's response id in `customMetadata.llm_response_id` when the server sent one
  // (ADK's own server does). tests/interop/views.py:adk_previews reads both.
  const out = {
    id: event.id,
    response_id: event.customMetadata?.llm_response_id ?? null,
    partial: Boolean(event.partial),
    parts: (event.content?.parts ?? []).map(partRecord),
  };
  if (event.errorCode || event.errorMessage) out.error = { code: event.errorCode, message: event.errorMessage };
  return out;
}

async function call({ url, message, user, session }) {
  const remote = new RemoteA2AAgent({ name: 'remote', agentCard: url });
  const sessionService = new InMemorySessionService();
  const runner = new Runner({ appName: 'adk-js-peer-client', agent: remote, sessionService });
  await sessionService.createSession({ appName: 'adk-js-peer-client', userId: user, sessionId: session });
  const events = [];
  const newMessage = { role: 'user', parts: [{ text: message }] };
  for await (const event of runner.runAsync({ userId: user, sessionId: session, newMessage })) {
    events.push(record(event));
  }
  return { events };
}

if (process.argv[2] === 'serve') {
  await serveAll(scenarioNames(SCRIPTS), app);
} else if (process.argv[2] === 'client') {
  await clientLoop(call);
} else {
  console.error('usage: node peer.mjs serve [--scenario NAME ...] | client');
  process.exit(2);
}
