// Part IV's translators translate a sentence the reader types (chapters/seq2seq/04-transformer,
// Explore): the page carries the trained Transformer and Bahdanau's translator in single
// precision; the grammar translates the sentence (translation.mjs), each model translates it
// greedily, by beam search or given the true previous words (decoding.mjs), and the page draws
// where each output word looked beside the grammar's alignment.  translation_of is the twin of
// experiments/translation_runs.translation_of and measures of its translation_measures;
// tests/js/translators.test.mjs holds both to the library's, and the browser tests type into
// the built page.
import { argmax, fromBase64, quoted, shown } from "./core.mjs";
import { EOS, along, beam_search, greedy } from "./decoding.mjs";
import { drawHeatMap, named } from "./heatmap.mjs";
import { bahdanau } from "./recurrent.mjs";
import { transformer } from "./transformer.mjs";
import { decode_target, encode_source, language, translate, words_of } from "./translation.mjs";

/** A translator the page carries, {config, names: [[name, shape], ...], weights: base64 of
 * float32}, as decoding.mjs reads a model (transformer.mjs or recurrent.mjs by config.kind). */
export function unpackModel(carried) {
  if (!carried?.config || !Array.isArray(carried.names) || typeof carried.weights !== "string") {
    throw new TypeError(`carried must be a translator as the page carries it, got ` +
      `${shown(carried)}`);
  }
  const flat = fromBase64(carried.weights);
  const params = {};
  let at = 0;
  for (const [name, shape] of carried.names) {
    const size = shape.reduce((a, b) => a * b, 1);
    params[name] = flat.subarray(at, at + size);
    at += size;
  }
  if (at !== flat.length) {
    throw new RangeError(`the carried weights hold ${flat.length} numbers, the names ${at}`);
  }
  const make = carried.config.kind === "Transformer" ? transformer : bahdanau;
  return make(carried.config, params);
}

/** translation_runs.translation_of for the source `words` (an array): {source, output,
 * reference, alignment, log_prob, weights (steps, m), forced (n + 1, m), forced_words}, the
 * weights as arrays of rows; or the grammar's Error for a sentence it cannot translate. */
export function translation_of(model, lang, words, beam = 1) {
  const pair = translate(words, lang);
  if (pair instanceof Error) return pair;
  const source = encode_source(pair.source, lang);
  const decoded = beam_search(model, source, beam);
  const { ids, weights } = beam === 1 ? greedy(model, source) : {
    ids: decoded.ids,
    weights: along(model, source, [model.bos, ...decoded.ids.slice(0, -1)]).weights,
  };
  const reference = [...pair.target.map((w) => lang.target.indexOf(w)), EOS];
  const forced = along(model, source, [model.bos, ...reference.slice(0, -1)]);
  return {
    source: pair.source,
    output: decode_target(ids, lang),
    reference: pair.target,
    alignment: pair.alignment,
    log_prob: decoded.log_prob,
    weights: weights,
    forced: forced.weights,
    forced_words: forced.logits.map((row) => lang.target[argmax(row, 0, row.length)]),
  };
}

/** translation_runs.still_right: the output words before the first that differs from the
 * reference (or before either ends). */
export function still_right(output, reference) {
  const n = Math.min(output.length, reference.length);
  for (let i = 0; i < n; i++) if (output[i] !== reference[i]) return i;
  return n;
}

/** translation_runs.translation_measures of translation_of's result: {exact, right, words,
 * still, on_truth, forced}. */
export function measures(r) {
  const { output, reference, alignment } = r;
  const n = reference.length, still = still_right(output, reference);
  const heaviest = (rows, i) => argmax(rows[i], 0, rows[i].length);
  let onTruth = 0, forced = 0, right = 0;
  for (let i = 0; i < still; i++) if (heaviest(r.weights, i) === alignment[i]) onTruth++;
  for (let i = 0; i < n; i++) if (heaviest(r.forced, i) === alignment[i]) forced++;
  for (let i = 0; i < Math.min(n, output.length); i++) if (output[i] === reference[i]) right++;
  const exact = output.length === n && right === n;
  return { exact, right, words: n, still, on_truth: onTruth, forced };
}

/** What the page shows of one model's translation r in `mode` ("greedy", "beam" or "forced"):
 * {words: [[word, right]], rows (labels of the heat map's rows), weights (flat, rows × m),
 * rings ([i, j] cells of the grammar's alignment), summary}. */
export function reading(r, mode) {
  const m = r.source.length, n = r.reference.length, score = measures(r);
  const flat = (rows) => {
    const out = new Float64Array(rows.length * m);
    rows.forEach((row, i) => out.set(row, i * m));
    return out;
  };
  if (mode === "forced") {
    const truth = [...r.reference, "</s>"];
    const right = r.forced_words.filter((w, i) => w === truth[i]).length;
    return {
      words: r.forced_words.map((w, i) => [w, w === truth[i]]),
      rows: truth,
      weights: flat(r.forced),
      rings: r.alignment.map((j, i) => [i, j]),
      summary: `${right} of ${n + 1} words guessed right (the ${n} words and </s>, each ` +
        `given the grammar's words before it); heaviest weight on the circled word: ` +
        `${score.forced} of the ${n} circled rows`,
    };
  }
  const shownRows = Math.min(r.output.length + 1, r.weights.length); // the words and </s>
  const rows = [...r.output, "</s>"].slice(0, shownRows);
  const plural = (k) => `${k} word${k === 1 ? "" : "s"}`;
  let length = "";
  if (r.output.length >= r.weights.length) { // every step wrote a word
    length = `; stopped after ${plural(r.output.length)} without </s>, at the step limit`;
  } else if (r.output.length < n) {
    length = `; ends ${plural(n - r.output.length)} early`;
  } // (a translation has as many words as its source, so an output runs long only to the limit)
  return {
    words: r.output.map((w, i) => [w, w === r.reference[i]]),
    rows,
    weights: flat(r.weights.slice(0, shownRows)),
    rings: r.alignment.slice(0, Math.min(shownRows, score.still)).map((j, i) => [i, j]),
    summary: `exact: ${score.exact ? "yes" : "no"}; ${score.right} of ${n} words right, ` +
      `position by position${length}; log-probability ${r.log_prob.toFixed(2)}; heaviest ` +
      `weight on the circled word: ${score.on_truth} of the ${score.still} circled rows`,
  };
}

/** The page's wording of the grammar's refusal `error` (translation.mjs), for the words typed. */
export function refusalMessage(error, words, lang) {
  const word = (at) => `word ${at + 1}${at < words.length ? ` (“${words[at]}”)` : ""}`;
  const ended = (at) => at >= words.length;
  const kinds = (part) => [...lang.kind].filter(([, k]) => k === part).map(([w]) => w);
  switch (error.reason) {
    case "empty":
      return "Type a sentence of the language, such as “the dog sees a red bird”.";
    case "unknown":
      return `Not words of the language: ${quoted(error.words)}. It has ` +
        `${lang.dictionary.size} words (listed below the box).`;
    case "noun phrase":
      return `${ended(error.at) ? "The sentence ends where" : `${word(error.at)}: here`} a noun ` +
        `phrase should start: a determiner (${kinds("determiner").join(", ")}), perhaps an ` +
        `adjective, then a noun.`;
    case "verb":
      return `${ended(error.at) ? "The sentence ends where" : `${word(error.at)}: here`} the ` +
        `clause's verb should come (${kinds("verb").join(", ")}).`;
    case "and":
      return `${word(error.at)}: a clause is complete here, so only “and”, starting another ` +
        `clause, may follow, or the end of the sentence.`;
    default:
      return error.message;
  }
}

/** Wire the explorer inside `root`: the sentence box, the decoding's radio buttons and beam
 * width, the status line, the grammar's translation and each model's translation with its
 * heat map.  `start` is {lexicon, specials, models: {name: carried}, sentence, longest,
 * most_beam, beam} (book.live.translator).  Shows `root`. */
export function mountTranslator(root, start) {
  const lang = language(start.lexicon, start.specials);
  const models = Object.fromEntries(Object.entries(start.models).map(([name, carried]) =>
    [name, unpackModel(carried)]));
  const box = root.querySelector("#live-source");
  const beamBox = root.querySelector("#live-beam");
  const status = root.querySelector(".live-status");
  const reference = root.querySelector(".live-reference");
  const results = root.querySelectorAll(".live-model");
  box.value = start.sentence;
  beamBox.value = String(start.beam);
  const refuse = (message, input) => {
    status.textContent = message;
    status.style.fontWeight = "bold"; // bold reads in both colour themes, where a red may not
    input.setAttribute("aria-invalid", "true");
    for (const part of [reference, ...results]) part.style.opacity = "0.4"; // no longer the box's
  };
  const show = () => {
    const mode = root.querySelector("input[name=live-decoding]:checked").value;
    box.removeAttribute("aria-invalid");
    beamBox.removeAttribute("aria-invalid");
    const words = words_of(box.value);
    const typed = Number(beamBox.value);
    if (mode === "beam" && !(Number.isInteger(typed) && typed >= 1 &&
      typed <= start.most_beam && beamBox.value.trim() !== "")) {
      return refuse(`The beam width must be a whole number from 1 to ${start.most_beam}.`,
        beamBox);
    }
    if (words.length > start.longest) {
      return refuse(`${words.length} words are too many: the page translates at most ` +
        `${start.longest}, the grammar's longest sentence of four clauses.`, box);
    }
    const beam = mode === "beam" ? typed : 1;
    const translations = {};
    for (const [name, model] of Object.entries(models)) {
      const r = translation_of(model, lang, words, beam);
      if (r instanceof Error) return refuse(refusalMessage(r, words, lang), box);
      translations[name] = r;
    }
    status.style.fontWeight = "";
    for (const part of [reference, ...results]) part.style.opacity = "";
    const first = Object.values(translations)[0];
    reference.textContent = `The grammar's translation: ${first.reference.join(" ")}`;
    const how = { greedy: "greedy", beam: `beam search of width ${beam}`,
      forced: "given the true previous words, each word a guess" }[mode];
    for (const result of results) {
      const name = result.dataset.model;
      const r = translations[name];
      const shownReading = reading(r, mode);
      const line = result.querySelector(".live-output");
      const title = Object.assign(document.createElement("strong"), { textContent: name });
      line.replaceChildren(title, `, ${how}: `);
      for (const [word, right] of shownReading.words) {
        // a word that differs from the grammar's, in bold and underlined (the name is bold)
        line.append(right ? `${word} ` : Object.assign(document.createElement("strong"),
          { textContent: word, className: "live-wrong" }), right ? "" : " ");
      }
      result.querySelector(".live-summary").textContent = shownReading.summary;
      drawHeatMap(result.querySelector("svg"), shownReading.rows, r.source, shownReading.weights,
        {
          rings: shownReading.rings,
          title: (i, j, w) => `${named(shownReading.rows, i)} looks at ${named(r.source, j)} ` +
            `with weight ${w.toFixed(3)}`,
        });
    }
    status.textContent = `${words.length} words, translated by ${Object.keys(models).length} ` +
      `models in this page`;
    root.dataset.shown = `${mode === "beam" ? `beam ${beam}` : mode}: ${words.join(" ")}`;
  };
  root.querySelector("form").addEventListener("submit", (event) => event.preventDefault());
  box.addEventListener("input", show);
  beamBox.addEventListener("input", () => {
    root.querySelector("input[name=live-decoding][value=beam]").checked = true;
    show();
  });
  for (const radio of root.querySelectorAll("input[name=live-decoding]")) {
    radio.addEventListener("change", show);
  }
  root.hidden = false;
  show();
}
