// The pages' behaviour: send the form as JSON, show the error or draw the answer (draw.js).
// The page runs its prefilled example once on load. body[data-state] is "busy", "done" or
// "error" after each request, for scripts and the browser tests to wait on.
"use strict";

(() => {
  const data = JSON.parse(document.getElementById("page-data").textContent || "null") || {};
  const status = document.getElementById("status");
  let latest = 0; // only the answer to the latest request is drawn

  function setState(state, message) {
    document.body.dataset.state = state;
    if (status) {
      status.textContent = message;
      status.className = state === "error" ? "error" : "";
    }
  }

  async function post(url, record) {
    const response = await fetch(url, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(record),
    });
    let answer;
    try {
      answer = await response.json();
    } catch (error) {
      answer = { error: `${response.status} ${response.statusText}` };
    }
    if (!response.ok) throw new Error(answer.error || `${response.status} ${response.statusText}`);
    return answer;
  }

  // "2, 5" -> [2, 5]; anything else is sent as typed, so the server names what is wrong with it.
  function indices(text) {
    const parts = text.split(",").map((p) => p.trim());
    return parts.every((p) => /^\d+$/.test(p)) ? parts.map(Number) : text;
  }

  function formRecord(form) {
    const record = {};
    for (const field of form.querySelectorAll("[name]")) {
      const value = field.value;
      if (field.dataset.optional === "true" && value.trim() === "") continue;
      record[field.name] = field.dataset.kind === "indices" ? indices(value) : value;
    }
    return record;
  }

  async function predict(form) {
    const record = formRecord(form);
    const result = document.getElementById("result");
    const mine = ++latest;
    setState("busy", "Predicting…");
    try {
      const answer = await post(form.dataset.api, record);
      if (mine !== latest) return;
      result.replaceChildren();
      ElmoDraw.tasks[form.dataset.task](answer, result, record);
      document.getElementById("raw-json").textContent = JSON.stringify(answer, null, 2);
      setState("done", "");
    } catch (error) {
      if (mine !== latest) return;
      result.replaceChildren();
      setState("error", error.message);
    }
  }

  function neighbourList(layer, index) {
    const list = ElmoDraw.el("ol");
    for (const n of layer.neighbours) {
      const sentence = ElmoDraw.el("span", { class: "sentence" });
      n.sentence.forEach((word, i) => {
        sentence.append(i === n.index ? ElmoDraw.el("mark", { text: word }) : word, " ");
      });
      list.append(ElmoDraw.el("li", { class: "neighbour", "data-similarity": n.similarity }, [
        ElmoDraw.el("span", { class: "similarity", text: n.similarity.toFixed(3) }), sentence]));
    }
    return ElmoDraw.el("section", { class: "layer", "data-layer": layer.layer },
      [ElmoDraw.el("h3", { text: `Layer ${layer.layer}: ${layer.name}` }), list]);
  }

  async function neighbours(form, index) {
    const box = document.getElementById("neighbours");
    const record = { sentence: form.sentence.value, word: index, same_word: form.same_word.checked, top: 5 };
    document.querySelectorAll("#words .word").forEach((b) => b.classList.toggle("chosen", +b.dataset.index === index));
    const mine = ++latest;
    setState("busy", "Looking up neighbours…");
    try {
      const answer = await post(form.dataset.api, record);
      if (mine !== latest) return;
      box.replaceChildren(...(answer.note ? [ElmoDraw.el("p", { class: "note", text: answer.note })] : []),
        ...answer.layers.map((layer) => neighbourList(layer, index)));
      setState("done", "");
    } catch (error) {
      if (mine !== latest) return;
      box.replaceChildren();
      setState("error", error.message);
    }
  }

  async function showWords(form, pick) {
    const words = document.getElementById("words");
    const mine = ++latest;
    setState("busy", "Splitting the sentence…");
    try {
      const answer = await post(form.dataset.api, { sentence: form.sentence.value });
      if (mine !== latest) return;
      words.replaceChildren(...answer.words.map((word, i) => {
        const button = ElmoDraw.el("button", { type: "button", class: "word", "data-index": i, text: word });
        button.addEventListener("click", () => neighbours(form, i));
        return button;
      }));
      document.getElementById("neighbours").replaceChildren();
      const chosen = answer.words.findIndex((w) => pick && w.toLowerCase() === pick.toLowerCase());
      if (chosen >= 0) await neighbours(form, chosen);
      else setState("done", "Pick a word.");
    } catch (error) {
      if (mine !== latest) return;
      words.replaceChildren();
      setState("error", error.message);
    }
  }

  const predictForm = document.getElementById("predict-form");
  if (predictForm) {
    predictForm.addEventListener("submit", (event) => { event.preventDefault(); predict(predictForm); });
    predict(predictForm);
  }
  const bilmForm = document.getElementById("bilm-form");
  if (bilmForm) {
    bilmForm.addEventListener("submit", (event) => { event.preventDefault(); showWords(bilmForm, null); });
    showWords(bilmForm, data.word);
  }
})();
