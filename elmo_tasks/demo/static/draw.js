// Draws one prediction of each task into the page: entity spans, SRL frames, coreference
// clusters, SQuAD answers, and probabilities as bars. Elements are built with textContent only,
// so no text from a model or a user is ever parsed as HTML. The markup (classes and data-*
// attributes) is what the browser tests read: tests/demo/test_demo_browser.py.
"use strict";

const ElmoDraw = (() => {
  const PALETTE = ["#f4a261", "#8ecae6", "#90be6d", "#e9c46a", "#cdb4db", "#ffafcc", "#b5e48c",
    "#a0c4ff", "#ffd6a5", "#caffbf", "#bdb2ff", "#fdffb6"];
  const FIXED = { PER: "#ffafcc", LOC: "#8ecae6", ORG: "#90be6d", MISC: "#e9c46a", V: "#f4a261" };

  function colour(key) {
    if (FIXED[key]) return FIXED[key];
    let hash = 0;
    for (const ch of String(key)) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
    return PALETTE[hash % PALETTE.length];
  }

  function el(tag, attributes = {}, children = []) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes)) {
      if (key === "text") node.textContent = value;
      else if (key === "colour") node.style.setProperty("--colour", value);
      else node.setAttribute(key, value);
    }
    for (const child of children) node.append(child);
    return node;
  }

  // Words with labelled, non-overlapping spans ({start, end (inclusive), label}) marked.
  function markedWords(words, spans, css) {
    const line = el("p", { class: "tokens" });
    let next = 0;
    for (const span of [...spans].sort((a, b) => a.start - b.start)) {
      if (span.start < next) continue; // overlapping: the first one wins
      if (span.start > next) line.append(words.slice(next, span.start).join(" ") + " ");
      const text = words.slice(span.start, span.end + 1).join(" ");
      line.append(el("mark", { class: `span ${css}`, "data-label": span.label, colour: colour(span.label) },
        [text, el("span", { class: "tag", text: span.label })]), " ");
      next = span.end + 1;
    }
    if (next < words.length) line.append(words.slice(next).join(" "));
    return line;
  }

  function counted(count, singular, plural = `${singular}s`) {
    return `${count} ${count === 1 ? singular : plural}`;
  }

  function summary(text, empty) {
    return el("p", { class: empty ? "summary empty" : "summary", text });
  }

  function ner(result, box) {
    const spans = (result.entities || []).map((e) => ({ start: e.start, end: e.end, label: e.type }));
    box.append(summary(spans.length ? counted(spans.length, "entity", "entities") : "No entities found.", !spans.length));
    box.append(markedWords(result.words, spans, "entity"));
  }

  // BIO tags -> spans; an I- tag that does not continue its label starts a span.
  function bioSpans(tags) {
    const spans = [];
    tags.forEach((tag, i) => {
      const label = tag.slice(2);
      const last = spans[spans.length - 1];
      if (tag.startsWith("I-") && last && last.label === label && last.end === i - 1) last.end = i;
      else if (tag !== "O") spans.push({ start: i, end: i, label });
    });
    return spans;
  }

  function srl(result, box) {
    const frames = result.verbs || [];
    const how = result.verbs_given ? "as given" : `found by the ${result.verbs_found_by}`;
    const found = `${counted(frames.length, "predicate")} (${how})`;
    box.append(summary(frames.length ? found : "No predicate found.", !frames.length));
    const body = el("tbody");
    for (const frame of frames) {
      body.append(el("tr", { class: "frame", "data-verb": frame.verb, "data-index": frame.index }, [
        el("td", { class: "verb", text: `${frame.verb} (${frame.index})` }),
        el("td", {}, [markedWords(result.words, bioSpans(frame.tags), "argument")]),
      ]));
    }
    const head = el("thead", {}, [el("tr", {}, [el("th", { text: "Predicate" }), el("th", { text: "Arguments" })])]);
    if (frames.length) box.append(el("table", { class: "srl" }, [head, body]));
  }

  // Mentions nest in HTML; a mention crossing an open one is listed but not marked in the text.
  function nestedMentions(clusters) {
    const all = [];
    clusters.forEach((cluster, k) => cluster.forEach(([start, end]) => all.push({ start, end, cluster: k })));
    all.sort((a, b) => a.start - b.start || b.end - a.end);
    const open = [];
    return all.filter((m) => {
      while (open.length && open[open.length - 1].end < m.start) open.pop();
      if (open.length && m.end > open[open.length - 1].end) return false;
      open.push(m);
      return true;
    });
  }

  function corefText(words, mentions) {
    const root = el("p", { class: "tokens" });
    const parents = [root];
    const stack = [];
    words.forEach((word, i) => {
      for (const m of mentions.filter((x) => x.start === i)) {
        const node = el("span", { class: "span mention", "data-cluster": m.cluster, colour: colour(`c${m.cluster}`) });
        parents[parents.length - 1].append(node);
        parents.push(node);
        stack.push(m);
      }
      parents[parents.length - 1].append(word);
      while (stack.length && stack[stack.length - 1].end === i) {
        const m = stack.pop();
        parents.pop().append(el("sub", { class: "tag", text: String(m.cluster + 1) }));
      }
      parents[parents.length - 1].append(" ");
    });
    return root;
  }

  function coref(result, box) {
    const clusters = result.clusters || [];
    box.append(summary(clusters.length ? counted(clusters.length, "cluster") : "No clusters found.", !clusters.length));
    box.append(corefText(result.document, nestedMentions(clusters)));
    const list = el("ol", { class: "clusters" });
    (result.cluster_strings || []).forEach((strings, k) => {
      list.append(el("li", { class: "cluster", "data-cluster": k, colour: colour(`c${k}`) },
        [el("span", { class: "swatch" }), strings.map((s) => `“${s}”`).join(" · ")]));
    });
    if (clusters.length) box.append(list);
  }

  function squad(result, box, input) {
    const passage = input.passage || "";
    let start = result.answer_start;
    let end = result.answer_end;
    if (passage.slice(start, end) !== result.answer) {
      start = passage.indexOf(result.answer);
      end = start < 0 ? start : start + result.answer.length;
    }
    const percent = `${(100 * result.span_probability).toFixed(1)}%`;
    box.append(el("p", { class: "summary" }, ["Answer: ", el("strong", { class: "answer-text", text: result.answer }),
      " ", el("span", { class: "probability", text: `(probability ${percent})` })]));
    const text = el("p", { class: "passage" });
    if (start >= 0) {
      text.append(passage.slice(0, start), el("mark", { class: "answer", text: passage.slice(start, end) }),
        passage.slice(end));
    } else {
      text.append(passage);
    }
    box.append(text);
  }

  function bars(rows, predicted) {
    const box = el("div", { class: "bars" });
    for (const [label, value] of rows) {
      const percent = `${(100 * value).toFixed(1)}%`;
      const bar = el("span", { class: "bar" });
      bar.style.width = percent;
      box.append(el("div", {
        class: label === predicted ? "bar-row predicted" : "bar-row", "data-label": label, "data-value": value,
      }, [el("span", { class: "bar-label", text: label }), el("span", { class: "bar-track" }, [bar]),
        el("span", { class: "bar-value", text: percent })]));
    }
    return box;
  }

  function ordered(probs, order) {
    const names = order.filter((n) => n in probs).concat(Object.keys(probs).filter((n) => !order.includes(n)));
    return names.map((name) => [name, probs[name]]);
  }

  function classes(order) {
    return (result, box) => {
      box.append(el("p", { class: "summary" }, ["Prediction: ", el("strong", { class: "label", text: result.label })]));
      box.append(bars(ordered(result.label_probs || {}, order), result.label));
    };
  }

  return {
    el, colour, bars,
    tasks: {
      ner, srl, coref, squad,
      snli: classes(["entailment", "neutral", "contradiction"]),
      sst5: classes(["very negative", "negative", "neutral", "positive", "very positive"]),
    },
  };
})();
