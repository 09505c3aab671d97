// The trace view under a finished run: its spans as a waterfall, read from the server's
// span buffer (GET playground/traces/<trace id>). The buffer holds the bridge's own spans
// and those other processes export to it (an upstream Go agent's), so a proxied call
// shows both sides under one trace. Spans exported late (batch exporters wait a few
// seconds) are picked up by reading the trace again for a while after the run. Uses
// playground.js's `el` (the page's one way to make an element) and `credentialHeaders`
// (the trace route is behind the same authentication as the run).
"use strict";

const Waterfall = (() => {
  const TRACES_URL = new URL("playground/traces/", document.baseURI);
  // Read again after these delays (ms) while the span count still changes.
  const REREAD = [300, 1000, 2000, 3000, 5000, 8000];
  // Attributes worth a line under a span (the rest is in the span's tooltip).
  const SHOWN = ["gen_ai.agent.name", "gen_ai.tool.name", "a2a.transport",
    "a2a.protocol.version", "http.response.status_code", "error.type"];

  function milliseconds(us) {
    return us >= 1000 ? `${(us / 1000).toFixed(1)} ms` : `${Math.round(us)} µs`;
  }

  // Spans in tree order (each after its parent), with their depth.
  function ordered(spans) {
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const children = new Map();
    const roots = [];
    for (const span of spans) {
      if (span.parentSpanId && byId.has(span.parentSpanId)) {
        if (!children.has(span.parentSpanId)) children.set(span.parentSpanId, []);
        children.get(span.parentSpanId).push(span);
      } else {
        roots.push(span);
      }
    }
    const out = [];
    const visit = (span, depth) => {
      out.push({ span, depth });
      for (const child of children.get(span.spanId) || []) visit(child, depth + 1);
    };
    for (const root of roots) visit(root, 0);
    return out;
  }

  function draw(container, spans) {
    const end = Math.max(1, ...spans.map((s) => s.startUs + s.durationUs));
    const services = [...new Set(spans.map((s) => s.service))];
    const list = el("ol", "waterfall");
    list.setAttribute("aria-label", `Trace: ${spans.length} spans`);
    for (const { span, depth } of ordered(spans)) {
      const row = el("li", "span-row");
      row.dataset.spanId = span.spanId;
      row.dataset.service = span.service;
      row.dataset.kind = span.kind;
      row.dataset.status = span.status;
      row.dataset.serviceIndex = String(services.indexOf(span.service) % 4);
      const label = el("div", "span-label");
      label.style.paddingLeft = `${depth * 0.9}em`;
      label.append(el("span", "span-name", span.name), " ", el("span", "span-service", span.service));
      const lane = el("div", "span-lane");
      const bar = el("div", "span-bar");
      bar.style.left = `${(span.startUs / end) * 100}%`;
      bar.style.width = `${Math.max(0.3, (span.durationUs / end) * 100)}%`;
      lane.append(bar);
      const time = el("span", "span-time", milliseconds(span.durationUs));
      row.title = Object.entries(span.attributes).map(([k, v]) => `${k} = ${v}`).join("\n");
      row.append(label, lane, time);
      const details = SHOWN.filter((k) => k in span.attributes).map((k) => `${k}=${span.attributes[k]}`);
      if (span.kind !== "INTERNAL") details.unshift(span.kind.toLowerCase());
      if (details.length) row.append(el("div", "span-attributes", details.join("  ")));
      list.append(row);
    }
    const legend = el("p", "waterfall-legend",
      `${spans.length} spans from ${services.length} ${services.length === 1 ? "process" : "processes"}: ${services.join(", ")}`);
    container.replaceChildren(legend, list);
  }

  // Fill `container` with the waterfall of `traceId`, read again while spans still come
  // in; nothing shown when the server keeps no spans (the trace view is off there).
  async function show(container, traceId) {
    let count = -1;
    for (const delay of [0, ...REREAD]) {
      if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
      let response;
      try {
        response = await fetch(new URL(traceId, TRACES_URL), { headers: credentialHeaders() });
      } catch {
        return;
      }
      if (!response.ok) return; // 404: this server keeps no spans (the trace view is off)
      const { spans } = await response.json();
      if (spans.length === count || spans.length === 0) continue;
      count = spans.length;
      container.hidden = false;
      draw(container, spans);
      container.dataset.spans = String(count);
    }
  }

  return { show };
})();
