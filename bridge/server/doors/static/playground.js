// The playground: a chat page that talks AG-UI to the server that served it (POST `agui`,
// answered with Server-Sent Events) and shows each run as it happens. Plain JavaScript,
// no dependencies, nothing fetched from anywhere else. Agent text is only ever inserted
// as text (never as HTML): answers are rendered as Markdown by markdown.js, which builds
// DOM nodes; the run's trace is drawn by waterfall.js. On an agent whose card asks for a
// credential, the user pastes it in the settings: it is sent, as the card says, with
// every call the page makes, and kept nowhere but in the page (never stored, never in a
// URL).
"use strict";

const AGUI_URL = new URL("agui", document.baseURI);
const CARD_URL = new URL(".well-known/agent-card.json", document.baseURI);
// The bridge names a traced run's SERVER span in a CUSTOM event `traceparent` whose value
// is the W3C header value: version-traceid-spanid-flags.
const TRACE_EVENT = "traceparent";
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

const $ = (id) => document.getElementById(id);

// crypto.randomUUID needs a secure context; getRandomValues also works over plain http.
function randomId(prefix) {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `${prefix}-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// JSON text shown indented when it parses, as it came otherwise.
function pretty(text) {
  if (typeof text !== "string") return JSON.stringify(text, null, 2);
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

// RFC 6902 add / replace / remove, enough for AG-UI state and activity deltas.
function applyPatch(doc, ops) {
  let root = structuredClone(doc ?? {});
  for (const op of ops) {
    if (!["add", "replace", "remove"].includes(op.op)) {
      throw new Error(`unsupported JSON Patch op ${JSON.stringify(op.op)}`);
    }
    const keys = op.path.split("/").slice(1).map((k) => k.replaceAll("~1", "/").replaceAll("~0", "~"));
    if (keys.length === 0) {
      root = op.op === "remove" ? {} : structuredClone(op.value);
      continue;
    }
    let parent = root;
    for (const key of keys.slice(0, -1)) {
      parent = parent?.[key];
      if (parent === null || typeof parent !== "object") throw new Error(`no ${op.path} to patch`);
    }
    const last = keys[keys.length - 1];
    if (Array.isArray(parent)) {
      const index = last === "-" ? parent.length : Number(last);
      if (op.op === "add") parent.splice(index, 0, op.value);
      else if (op.op === "replace") parent[index] = op.value;
      else parent.splice(index, 1);
    } else if (op.op === "remove") {
      delete parent[last];
    } else {
      parent[last] = op.value;
    }
  }
  return root;
}

// Server-Sent Events from a fetch response: one parsed `data:` payload per event.
async function* sseEvents(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let data = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    const lines = buffer.split(/\r\n|\r|\n/);
    buffer = lines.pop();
    for (const line of lines) {
      if (line === "") {
        if (data.length) yield JSON.parse(data.join("\n"));
        data = [];
      } else if (line.startsWith("data:")) {
        data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
      } // AG-UI uses no other field; comments and `event:` lines are skipped
    }
  }
  if (data.length) yield JSON.parse(data.join("\n"));
}

// --- the credential ---------------------------------------------------------------------
// How the card asks to be called (A2A 1.0 securitySchemes and securityRequirements; the
// 0.3 `security` list when there are no 1.0 requirements), as far as a page can send it:
// an API key in a header, or a bearer token (HTTP bearer, OAuth 2.0, OpenID Connect).
// A client certificate (mutual TLS) is the browser's to present; a key in a query string
// or a cookie is not sent from here.
const credential = { header: "", prefix: "", label: "" };
const BEARER = { header: "Authorization", prefix: "Bearer ", label: "Bearer token, sent as Authorization: Bearer" };

function schemeHeader(scheme) {
  const apiKey = scheme.apiKeySecurityScheme ?? (scheme.type === "apiKey" ? { location: scheme.in, name: scheme.name } : null);
  if (apiKey) {
    if (String(apiKey.location).toLowerCase() !== "header" || !apiKey.name) return null;
    return { header: apiKey.name, prefix: "", label: `API key, sent as ${apiKey.name}` };
  }
  const http = scheme.httpAuthSecurityScheme ?? (scheme.type === "http" ? scheme : null);
  if (http) return String(http.scheme).toLowerCase() === "bearer" ? BEARER : null;
  const tokens = scheme.oauth2SecurityScheme || scheme.openIdConnectSecurityScheme
    || scheme.type === "oauth2" || scheme.type === "openIdConnect";
  return tokens ? BEARER : null;
}

const mutualTls = (scheme) => Boolean(scheme.mtlsSecurityScheme) || scheme.type === "mutualTLS";

// The header of the first requirement the page can meet (one header credential, perhaps
// with a client certificate); null when the card asks for none the page can send.
function cardCredential(card) {
  const schemes = card.securitySchemes || {};
  const required = (card.securityRequirements || []).map((r) => Object.keys(r.schemes || {}));
  const alternatives = required.length ? required : (card.security || []).map((r) => Object.keys(r));
  for (const names of alternatives) {
    const found = names.map((name) => schemes[name]);
    if (found.some((scheme) => !scheme)) continue;
    const headers = found.filter((scheme) => !mutualTls(scheme)).map(schemeHeader);
    if (headers.length === 1 && headers[0]) return headers[0];
  }
  return null;
}

// The credential header for a call (none until the user pasted one). The value is read
// from the field each time: nothing else holds it.
function credentialHeaders() {
  const value = $("credential").value.trim();
  return credential.header && value ? { [credential.header]: credential.prefix + value } : {};
}

// The card asks for a credential: the settings offer its field instead of the user id
// (the credential names the user).
function offerCredential(found) {
  Object.assign(credential, found);
  $("credential-label").textContent = found.label;
  $("credential-row").hidden = false;
  $("user-row").hidden = true;
  $("settings-title").textContent = "Thread and credential";
}

// A refused run in words a person can act on (the server's reason never holds the
// credential).
async function refusal(response) {
  const reason = await errorText(response);
  if (response.status === 401) {
    if (!credential.header) {
      return `Authentication required: ${reason}. The agent card names no credential this page can send.`;
    }
    $("settings").open = true;
    const what = credential.label.split(",")[0];
    return `Authentication required: ${reason}. Paste your ${what} in the settings above (“${credential.label}”).`;
  }
  if (response.status === 403) return `Permission denied: ${reason}`;
  return `HTTP ${response.status}: ${reason}`;
}

// The conversation: one thread (the A2A context id) kept across turns.
const session = {
  threadId: "",
  messages: [], // AG-UI history of this thread: user messages and assistant answers
  state: {},
  running: null, // AbortController of the run in progress
};

// One run as it streams in: user prompt, ordered steps, then status and trace.
class RunView {
  constructor(prompt, runId) {
    this.runId = runId;
    this.started = performance.now();
    this.ended = false;
    this.texts = new Map(); // messageId → {node, body, text node, role, text}
    this.codeShown = new Set(); // code (trimmed) shown in a Code box: not again in answers
    this.reasonings = new Map(); // messageId → its text node
    this.tools = new Map(); // toolCallId → {node, args}
    this.activities = new Map(); // messageId → {node, activityType, content}
    this.events = [];

    this.root = el("article", "run");
    this.root.dataset.status = "running";
    this.root.setAttribute("aria-busy", "true");
    this.root.setAttribute("aria-label", `Run ${runId}`);
    const user = el("div", "user");
    user.append(el("span", "who", "You"), el("p", "user-text", prompt));
    this.steps = el("ol", "steps");

    this.traceView = el("section", "trace-view");
    this.traceView.hidden = true;
    this.traceView.setAttribute("aria-label", "Trace");

    const meta = el("footer", "run-meta");
    this.status = el("span", "status", "running…");
    this.trace = el("span", "trace", "trace: not named yet");
    this.elapsed = el("span", "elapsed");
    const run = el("span", "run-id");
    run.append("run ", el("code", "", runId));
    meta.append(this.status, this.trace, this.elapsed, run);

    this.log = el("details", "events");
    this.logSummary = el("summary", "", "AG-UI events (0)");
    this.logBody = el("pre", "events-log");
    this.log.append(this.logSummary, this.logBody);
    // Rendered when opened: a long run's events cost nothing while nobody looks.
    this.log.addEventListener("toggle", () => {
      if (this.log.open) this.logBody.textContent = this.events.map((e) => JSON.stringify(e)).join("\n");
    });

    this.root.append(user, this.steps, meta, this.traceView, this.log);
  }

  step(kind, label) {
    const item = el("li", `step ${kind}`);
    if (label) item.append(el("div", "label", label));
    this.steps.append(item);
    return item;
  }

  on_CUSTOM(e) {
    if (e.name !== TRACE_EVENT) return;
    const match = TRACEPARENT.exec(String(e.value).trim().toLowerCase());
    if (!match) return this.error(`unreadable trace context ${JSON.stringify(e.value)}`);
    this.trace.textContent = "";
    const sampled = (parseInt(match[4], 16) & 1) === 1;
    const id = el("code", "trace-id", match[2]);
    id.title = "Search for this trace id in your trace backend";
    this.trace.append("trace ", id);
    if (!sampled) this.trace.append(" (not sampled: not exported)");
    this.root.dataset.traceId = match[2];
  }

  // No trace event by the end of the run: the server recorded none.
  noTrace() {
    this.trace.textContent = "no trace recorded (tracing is off on this server)";
    this.trace.classList.add("none");
  }

  handle(event) {
    this.events.push(event);
    this.logSummary.textContent = `AG-UI events (${this.events.length})`;
    if (this.log.open) this.logBody.append(`${this.logBody.textContent ? "\n" : ""}${JSON.stringify(event)}`);
    // Handlers exist for what the bridge's /agui sends (codecs/agui/translator.py, the door's trace
    // event); any other type is only listed with the run's events.
    const handler = this[`on_${event.type}`];
    if (handler) handler.call(this, event);
  }

  // --- answer text ---------------------------------------------------------------------
  text(messageId, role) {
    let entry = this.texts.get(messageId);
    if (!entry) {
      const label = !role || role === "assistant" ? "Answer" : `Message (${role})`;
      const node = this.step("answer", label);
      const body = el("div", "answer-text");
      // While it streams, one text node per message, grown in place (a long answer is
      // not a node per delta); rendered as Markdown once the message ends.
      const text = document.createTextNode("");
      body.append(text);
      node.append(body);
      entry = { node, body, textNode: text, role: role || "assistant", text: "", rendered: false };
      this.texts.set(messageId, entry);
    }
    return entry;
  }
  appendText(messageId, role, delta) {
    const entry = this.text(messageId, role);
    entry.text += delta;
    if (entry.rendered) this.renderText(entry, true);
    else entry.textNode.appendData(delta);
  }
  // The message as Markdown, without the code blocks a Code box of this run shows.
  renderText(entry, streaming = false) {
    entry.rendered = !streaming;
    entry.body.replaceChildren(Markdown.render(entry.text, this.codeShown));
    entry.body.classList.add("markdown");
    entry.node.hidden = entry.body.textContent.trim() === "" && entry.text.trim() !== "";
  }
  on_TEXT_MESSAGE_START(e) { this.text(e.messageId, e.role); }
  on_TEXT_MESSAGE_CONTENT(e) { this.appendText(e.messageId, undefined, e.delta); }
  on_TEXT_MESSAGE_END(e) { this.renderText(this.text(e.messageId)); }

  // --- reasoning -----------------------------------------------------------------------
  reasoning(messageId) {
    let text = this.reasonings.get(messageId);
    if (!text) {
      const node = this.step("reasoning");
      const details = el("details");
      details.open = true;
      details.append(el("summary", "", "Reasoning"));
      const body = el("div", "reasoning-text");
      text = document.createTextNode("");
      body.append(text);
      details.append(body);
      node.append(details);
      this.reasonings.set(messageId, text);
    }
    return text;
  }
  on_REASONING_START(e) { this.reasoning(e.messageId); }
  on_REASONING_MESSAGE_START(e) { this.reasoning(e.messageId); }
  on_REASONING_MESSAGE_CONTENT(e) { this.reasoning(e.messageId).appendData(e.delta); }

  // --- tool calls ----------------------------------------------------------------------
  tool(toolCallId, name) {
    let entry = this.tools.get(toolCallId);
    if (!entry) {
      const node = this.step("tool");
      const head = el("div", "label");
      const toolName = el("code", "tool-name", name || "(unnamed tool)");
      const status = el("span", "tool-status", "running…");
      head.append("Tool call ", toolName, " ", status);
      const args = el("pre", "tool-args");
      const result = el("pre", "tool-result");
      const resultLabel = el("div", "sublabel", "Result");
      resultLabel.hidden = result.hidden = true;
      node.append(head, el("div", "sublabel", "Arguments"), args, resultLabel, result);
      node.dataset.toolCallId = toolCallId;
      entry = { node, args, result, resultLabel, status, raw: "" };
      this.tools.set(toolCallId, entry);
    }
    return entry;
  }
  on_TOOL_CALL_START(e) { this.tool(e.toolCallId, e.toolCallName); }
  on_TOOL_CALL_ARGS(e) {
    const entry = this.tool(e.toolCallId);
    entry.raw += e.delta;
    entry.args.textContent = entry.raw;
  }
  on_TOOL_CALL_END(e) {
    const entry = this.tool(e.toolCallId);
    entry.args.textContent = pretty(entry.raw);
    entry.status.textContent = "waiting for the result…";
  }
  on_TOOL_CALL_RESULT(e) {
    const entry = this.tool(e.toolCallId);
    entry.result.textContent = pretty(e.content);
    entry.result.hidden = entry.resultLabel.hidden = false;
    entry.status.textContent = "done";
    entry.node.classList.add("done");
  }

  // --- activities: code and its output, or anything else as JSON -------------------------
  renderActivity(entry) {
    const { node, activityType, content } = entry;
    node.replaceChildren();
    if (activityType === "code_execution") {
      node.className = "step code";
      if (content.code !== undefined) this.showCode(node, content.code);
      if (content.output !== undefined) node.append(el("div", "label", "Output"), el("pre", "code-output", content.output));
      else node.append(el("div", "sublabel", "running…"));
    } else {
      node.className = "step activity";
      node.append(el("div", "label", `Activity: ${activityType}`), el("pre", "", pretty(content)));
    }
  }
  // A code event carries the model's text: its fenced blocks are the code (shown here,
  // and left out of the answer that said the same), the rest is prose. Code without
  // fences is all code.
  showCode(node, text) {
    const blocks = Markdown.blocks(text);
    const code = blocks.length ? blocks.map((b) => b.code).join("\n") : text;
    const lang = blocks.find((b) => b.lang)?.lang;
    node.append(el("div", "label", lang ? `Code (${lang})` : "Code"), el("pre", "code-src", code));
    const fresh = blocks.length ? blocks.map((b) => b.code.trim()) : [];
    if (!fresh.some((c) => !this.codeShown.has(c))) return;
    for (const c of fresh) this.codeShown.add(c);
    for (const entry of this.texts.values()) if (entry.rendered) this.renderText(entry);
  }
  on_ACTIVITY_SNAPSHOT(e) {
    let entry = this.activities.get(e.messageId);
    if (!entry) {
      entry = { node: this.step("activity"), activityType: e.activityType, content: {} };
      this.activities.set(e.messageId, entry);
    }
    entry.activityType = e.activityType;
    entry.content = e.content ?? {};
    this.renderActivity(entry);
  }
  on_ACTIVITY_DELTA(e) {
    const entry = this.activities.get(e.messageId);
    if (!entry) return this.error(`activity delta for unknown message ${e.messageId}`);
    try {
      entry.content = applyPatch(entry.content, e.patch);
    } catch (err) {
      return this.error(`activity patch not applied: ${err.message}`);
    }
    this.renderActivity(entry);
  }

  // --- state ----------------------------------------------------------------------------
  on_STATE_DELTA(e) {
    const node = this.step("state", "State change");
    const list = el("ul", "state-ops");
    for (const op of e.delta) {
      const item = el("li");
      item.append(el("code", "", `${op.op} ${op.path}`));
      if ("value" in op) item.append(" = ", el("code", "", JSON.stringify(op.value)));
      list.append(item);
    }
    node.append(list);
    try {
      session.state = applyPatch(session.state, e.delta);
    } catch (err) {
      this.error(`state patch not applied: ${err.message}`);
    }
    showState();
  }

  // --- run lifecycle --------------------------------------------------------------------
  error(message) {
    const node = this.step("error");
    node.setAttribute("role", "alert");
    node.append(el("strong", "", "Error: "), message);
  }
  finish(status, label) {
    if (this.ended) return;
    this.ended = true;
    this.root.dataset.status = status;
    this.root.setAttribute("aria-busy", "false");
    this.status.textContent = label;
    this.elapsed.textContent = `${((performance.now() - this.started) / 1000).toFixed(2)} s`;
    if (!this.root.dataset.traceId) this.noTrace();
    else Waterfall.show(this.traceView, this.root.dataset.traceId);
    for (const entry of this.texts.values()) if (!entry.rendered) this.renderText(entry);
    for (const entry of this.tools.values()) {
      if (!entry.node.classList.contains("done")) entry.status.textContent = "no result";
    }
  }
  on_RUN_FINISHED(e) {
    if (e.outcome?.type === "cancelled") this.finish("cancelled", "cancelled");
    else this.finish("finished", "finished");
  }
  on_RUN_ERROR(e) {
    this.error(e.code ? `${e.message} (${e.code})` : e.message);
    this.finish("error", "failed");
  }
  streamEnded() {
    if (!this.ended) this.fail("the stream ended before the run finished");
  }
  fail(message) {
    this.error(message);
    this.finish("error", "failed");
  }
  // The server answered with an HTTP error: the run never started, so it has no trace.
  refused(message) {
    this.fail(message);
    this.trace.textContent = "no trace: the run was refused";
  }

  // What the agent said, as AG-UI history for the next turn.
  assistantMessages() {
    return [...this.texts]
      .filter(([, entry]) => entry.role === "assistant" && entry.text)
      .map(([id, entry]) => ({ id, role: "assistant", content: entry.text }));
  }
}

function showState() {
  const panel = $("state-panel");
  panel.hidden = Object.keys(session.state).length === 0;
  $("state").textContent = JSON.stringify(session.state, null, 2);
}

function newThread() {
  session.running?.abort();
  session.threadId = randomId("thread");
  session.messages = [];
  session.state = {};
  $("thread-id").textContent = session.threadId;
  for (const run of document.querySelectorAll("#transcript .run")) run.remove();
  $("hint").hidden = false;
  showState();
}

// An HTTP error's body, in a line: the bridge answers `{"error": …, "detail": […]}`.
async function errorText(response) {
  const body = await response.text();
  try {
    const parsed = JSON.parse(body);
    const details = (parsed.detail || []).map((d) => `${(d.loc || []).join(".")}: ${d.msg}`);
    return [parsed.error || body, ...details].join("; ");
  } catch {
    return body.slice(0, 500) || response.statusText;
  }
}

function setRunning(controller) {
  session.running = controller;
  $("send").disabled = controller !== null;
  $("stop").disabled = controller === null;
}

function nearBottom() {
  const page = document.scrollingElement;
  return page.scrollHeight - page.scrollTop - page.clientHeight < 120;
}

// The page follows a streaming run unless the reader scrolled up. Measuring layout for
// every event would force a layout per event (seconds for a thousand-delta answer), so
// the position is read on scroll and the page scrolled once per frame.
let following = true;
let scrollQueued = false;
window.addEventListener("scroll", () => { following = nearBottom(); }, { passive: true });

function follow(view) {
  if (!following || scrollQueued) return;
  scrollQueued = true;
  requestAnimationFrame(() => {
    scrollQueued = false;
    view.root.scrollIntoView({ block: "end" });
  });
}

async function run(prompt) {
  $("hint").hidden = true;
  const runId = randomId("run");
  const view = new RunView(prompt, runId);
  $("transcript").append(view.root);
  following = true;
  follow(view);
  const userMessage = { id: randomId("msg"), role: "user", content: prompt };
  const input = {
    threadId: session.threadId,
    runId,
    state: session.state,
    messages: [...session.messages, userMessage],
    tools: [],
    context: [],
    forwardedProps: {},
  };
  const headers = { "Content-Type": "application/json", Accept: "text/event-stream", ...credentialHeaders() };
  const user = $("user-id").value.trim();
  if (user && !credential.header) headers["X-User-ID"] = user;
  const controller = new AbortController();
  setRunning(controller);
  try {
    const response = await fetch(AGUI_URL, {
      method: "POST", headers, body: JSON.stringify(input), signal: controller.signal,
    });
    if (!response.ok) {
      view.refused(await refusal(response));
      return;
    }
    for await (const event of sseEvents(response)) {
      view.handle(event);
      follow(view);
    }
    view.streamEnded();
  } catch (err) {
    if (err.name === "AbortError") view.finish("stopped", "stopped by you");
    else view.fail(err.message || String(err));
  } finally {
    session.messages.push(userMessage, ...view.assistantMessages());
    setRunning(null);
    $("prompt").focus();
  }
}

async function showAgent() {
  const target = $("agent");
  try {
    const response = await fetch(CARD_URL);
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const card = await response.json();
    target.textContent = "";
    target.append(el("strong", "agent-name", card.name || "(unnamed agent)"));
    if (card.description) target.append(`: ${card.description}`);
    const found = cardCredential(card);
    if (found) offerCredential(found);
  } catch (err) {
    target.textContent = `Agent card not available (${err.message}).`;
  }
}

function main() {
  newThread();
  showAgent();
  const prompt = $("prompt");
  $("composer").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = prompt.value.trim();
    if (!text || session.running) return;
    prompt.value = "";
    run(text);
  });
  prompt.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      $("composer").requestSubmit();
    }
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && session.running) session.running.abort();
  });
  $("stop").addEventListener("click", () => session.running?.abort());
  $("new-thread").addEventListener("click", newThread);
  prompt.focus();
}

main();
