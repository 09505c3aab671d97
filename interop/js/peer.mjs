// The official A2A JavaScript SDK (@a2a-js/sdk, A2A 1.0) as an interop peer: its own
// server (DefaultRequestHandler + the express JSON-RPC transport) and client
// (ClientFactory), around the scenario scripts. No model, no network but loopback.
//
//   node peer.mjs serve [--scenario NAME ...]   every scenario (default: all) on its own port
//   node peer.mjs client                         answers calls read from stdin
//
// The server's agent (an AgentExecutor) streams each script step as artifact updates,
// A2A's own streaming unit (README.md, "Scenarios on the wire"): artifactId = the step's
// response id, chunks appended, then the complete response replacing them
// (`append: false`, `lastChunk: true`). A2A has no reasoning or tool-call part, so they
// use the part conventions of docs/specs/trpc-interaction.md §0.4: text parts with
// `metadata.thought: true`, DataParts typed by `metadata.type`.
// The client prints every StreamResponse (or the unary Task / Message) in the SDK's
// own JSON: the tests fold them into what a user sees (tests/interop/views.py).
import { randomUUID } from 'node:crypto';
import express from 'express';
import {
  AGENT_CARD_PATH,
  AgentCard,
  Message,
  SendMessageRequest,
  StreamResponse,
  Task,
  TaskArtifactUpdateEvent,
  TaskStatusUpdateEvent,
} from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk/client';
import { clientLoop, scenarioNames, scripts, serveAll } from './harness.mjs';

const SCRIPTS = scripts();

const text = (value, metadata) => (metadata ? { text: value, metadata } : { text: value });
const thought = (value) => text(value, { thought: true });

function callPart(call) {
  const data = { id: call.id, name: call.name, args: JSON.stringify(call.args) };
  return { data, metadata: { type: 'function_call' } };
}

function resultPart(call) {
  const data = { id: call.id, name: call.name, response: JSON.stringify(call.result) };
  return { data, metadata: { type: 'function_response' } };
}

class ScriptedExecutor {
  constructor(script) {
    this.script = script;
  }

  async execute(context, bus) {
    const { taskId, contextId } = context;
    const publishArtifact = (artifactId, parts, append, lastChunk) =>
      bus.publish(
        AgentEvent.artifactUpdate(
          TaskArtifactUpdateEvent.fromJSON({
            taskId,
            contextId,
            artifact: { artifactId, parts },
            append,
            lastChunk,
          }),
        ),
      );
    const publishStatus = (state, message) =>
      bus.publish(
        AgentEvent.statusUpdate(
          TaskStatusUpdateEvent.fromJSON({ taskId, contextId, status: { state, message } }),
        ),
      );
    if (!context.task) {
      const history = [Message.toJSON(context.userMessage)];
      const task = { id: taskId, contextId, status: { state: 'TASK_STATE_SUBMITTED' }, history };
      bus.publish(AgentEvent.task(Task.fromJSON(task)));
    }
    publishStatus('TASK_STATE_WORKING');
    let previous = null;
    for (const step of this.script.steps) {
      if (previous?.calls.length) {
        // The agent ran the tools the previous step called: their results, one artifact.
        publishArtifact(randomUUID(), previous.calls.map(resultPart), false, true);
      }
      const sent = new Set();
      const chunk = (part) => {
        publishArtifact(step.response_id, [part], sent.has(step.response_id), false);
        sent.add(step.response_id);
      };
      step.reasoning.forEach((piece) => chunk(thought(piece)));
      step.chunks.forEach((piece) => chunk(text(piece)));
      if (step.error) {
        const message = { messageId: randomUUID(), role: 'ROLE_AGENT', parts: [text(step.error[1])] };
        publishStatus('TASK_STATE_FAILED', { ...message, taskId, contextId });
        bus.finished();
        return;
      }
      const parts = [];
      if (step.reasoning.length) parts.push(thought(step.reasoning.join('')));
      if (step.chunks.length) parts.push(text(step.chunks.join('')));
      parts.push(...step.calls.map(callPart));
      publishArtifact(step.response_id, parts, false, true);
      previous = step;
    }
    publishStatus('TASK_STATE_COMPLETED');
    bus.finished();
  }

  async cancelTask(taskId, bus) {
    bus.publish(
      AgentEvent.statusUpdate(
        TaskStatusUpdateEvent.fromJSON({ taskId, status: { state: 'TASK_STATE_CANCELED' } }),
      ),
    );
    bus.finished();
  }
}

function card(url) {
  return AgentCard.fromJSON({
    name: 'weather_agent',
    description: 'A2A JavaScript SDK interop scenario agent',
    version: '1.0.0',
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'weather', name: 'weather', description: 'Scripted scenario', tags: ['weather'] }],
  });
}

async function app(scenario, url) {
  const agentCard = card(url);
  const handler = new DefaultRequestHandler(
    agentCard,
    new InMemoryTaskStore(),
    new ScriptedExecutor(SCRIPTS[scenario]),
  );
  const server = express();
  server.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler }));
  server.use('/', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  return server;
}

const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: ['JSONRPC'] }),
);

async function call({ url, message, session, stream }) {
  const client = await factory.createFromUrl(url);
  const request = SendMessageRequest.fromJSON({
    message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [text(message)], contextId: session },
  });
  const events = [];
  if (stream) {
    for await (const event of client.sendMessageStream(request)) {
      events.push(StreamResponse.toJSON(event));
    }
  } else {
    const result = await client.sendMessage(request);
    events.push('status' in result ? { task: Task.toJSON(result) } : { message: Message.toJSON(result) });
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
