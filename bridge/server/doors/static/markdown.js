// Markdown for the playground's answers, rendered safely: the text is parsed here and
// every piece becomes a DOM node built with createElement / textContent, so nothing an
// agent writes is ever parsed as HTML (a `<script>` in an answer is shown as text).
// Links keep http(s) and mailto targets only and open without a referrer.
//
// The subset: fenced code blocks (``` or ~~~, with a language), ATX headings, block
// quotes, bulleted and numbered lists (one level), horizontal rules, paragraphs; inline
// code, **strong**, *emphasis* / _emphasis_, ~~strikethrough~~ and [links](url).
"use strict";

const Markdown = (() => {
  const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)\s*$/;
  const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
  const BULLET = /^ {0,3}[-*+]\s+(.*)$/;
  const NUMBERED = /^ {0,3}(\d{1,9})[.)]\s+(.*)$/;
  const QUOTE = /^ {0,3}>\s?(.*)$/;
  const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
  const SAFE_URL = /^(https?:|mailto:)/i;

  const node = (tag, text) => el(tag, "", text); // playground.js's element maker

  // Fenced code blocks of `text`: [{lang, code, start, end}] with line indexes, so callers
  // can tell the code apart from the prose around it.
  function blocks(text) {
    const lines = text.split("\n");
    const found = [];
    for (let i = 0; i < lines.length; i++) {
      const open = FENCE.exec(lines[i]);
      if (!open) continue;
      const marker = open[1];
      let end = i + 1;
      while (end < lines.length && !lines[end].trim().startsWith(marker)) end++;
      found.push({ lang: open[2], code: lines.slice(i + 1, end).join("\n"), start: i, end });
      i = end;
    }
    return found;
  }

  // Inline markup of one run of text, appended to `parent`.
  function inline(parent, text) {
    const pattern = /(`+)([\s\S]*?[^`])\1(?!`)|\*\*([\s\S]+?)\*\*|__([\s\S]+?)__|~~([\s\S]+?)~~|\*([^*\s][\s\S]*?)\*|\b_([^_\s][\s\S]*?)_\b|\[([^\]]+)\]\(([^)\s]+)\)/g;
    let at = 0;
    for (const match of text.matchAll(pattern)) {
      if (match.index > at) parent.append(text.slice(at, match.index));
      at = match.index + match[0].length;
      if (match[1]) parent.append(node("code", match[2]));
      else if (match[3] || match[4]) inline(parent.appendChild(node("strong")), match[3] || match[4]);
      else if (match[5]) inline(parent.appendChild(node("del")), match[5]);
      else if (match[6] || match[7]) inline(parent.appendChild(node("em")), match[6] || match[7]);
      else if (SAFE_URL.test(match[9])) {
        const link = node("a");
        link.href = match[9];
        link.rel = "noopener noreferrer nofollow";
        link.target = "_blank";
        inline(link, match[8]);
        parent.append(link);
      } else {
        parent.append(match[0]); // another scheme (javascript:, data:): left as text
      }
    }
    if (at < text.length) parent.append(text.slice(at));
  }

  // Lines joined into one paragraph-like element, with hard breaks kept.
  function lines(parent, texts) {
    texts.forEach((text, index) => {
      if (index) parent.append(node("br"));
      inline(parent, text);
    });
    return parent;
  }

  // `text` as a DocumentFragment; fenced blocks whose code is in `skip` are left out.
  function render(text, skip = new Set()) {
    const out = document.createDocumentFragment();
    const source = text.split("\n");
    let paragraph = [];
    let list = null;
    const flush = () => {
      if (paragraph.length) out.append(lines(node("p"), paragraph));
      paragraph = [];
      list = null;
    };
    for (let i = 0; i < source.length; i++) {
      const line = source[i];
      const fence = FENCE.exec(line);
      if (fence) {
        flush();
        let end = i + 1;
        while (end < source.length && !source[end].trim().startsWith(fence[1])) end++;
        const code = source.slice(i + 1, end).join("\n");
        if (!skip.has(code.trim())) {
          const pre = node("pre");
          const body = node("code", code);
          if (fence[2]) body.dataset.lang = fence[2];
          pre.append(body);
          out.append(pre);
        }
        i = end;
        continue;
      }
      if (line.trim() === "") {
        flush();
        continue;
      }
      let match;
      if ((match = HEADING.exec(line))) {
        flush();
        out.append(lines(node(`h${Math.min(match[1].length + 2, 6)}`), [match[2]]));
      } else if (RULE.test(line)) {
        flush();
        out.append(node("hr"));
      } else if ((match = QUOTE.exec(line))) {
        flush();
        const quoted = [match[1]];
        while (i + 1 < source.length && QUOTE.test(source[i + 1])) quoted.push(QUOTE.exec(source[++i])[1]);
        const quote = node("blockquote");
        quote.append(render(quoted.join("\n"), skip));
        out.append(quote);
      } else if ((match = BULLET.exec(line)) || (match = NUMBERED.exec(line))) {
        const ordered = !BULLET.test(line);
        if (paragraph.length) flush();
        if (!list || list.tagName !== (ordered ? "OL" : "UL")) {
          list = node(ordered ? "ol" : "ul");
          if (ordered && match[1] !== "1") list.start = Number(match[1]);
          out.append(list);
        }
        list.append(lines(node("li"), [ordered ? match[2] : match[1]]));
      } else if (list && /^\s{2,}\S/.test(line)) {
        lines(list.lastChild, ["", line.trim()]); // a list item's continuation line
      } else {
        list = null;
        paragraph.push(line);
      }
    }
    flush();
    return out;
  }

  return { render, blocks };
})();
