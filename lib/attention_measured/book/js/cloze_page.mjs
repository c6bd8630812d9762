// Part II's heads read a sentence the reader types (chapters/udhr/04-what-it-remembers, Explore):
// the page carries the three trained heads (token, blank and position query) in single
// precision, cloze_head.mjs reads the sentence with the chosen one, and the page draws the
// weights as a heat map (each cell's number on hover) and prints each word's prediction.  The
// static twins above it show the corpus's sentences; tests/js/cloze_head.test.mjs holds the
// numbers to the library's, and the browser tests type into the built page.
import { NAMES, WIDTH, encode, forward } from "./cloze_head.mjs";
import { argmax, fromBase64 } from "./core.mjs";
import { drawHeatMap, named } from "./heatmap.mjs";

const EXTRA = { token: [], blank: ["mask_embedding"], position: ["positions"] };

/** The heads the page carries, {token, blank, position}, each as cloze_head.forward takes it. */
export function unpackHeads(carried, vocabulary, longest) {
  const V = vocabulary.length, d = WIDTH;
  const sizes = { E: V * d, W_Q: d * d, W_K: d * d, W_V: d * d, W_O: d * V,
    mask_embedding: d, positions: longest * d };
  const heads = {};
  for (const [name, text] of Object.entries(carried)) {
    const flat = fromBase64(text);
    const params = {};
    let at = 0;
    for (const array of [...NAMES, ...EXTRA[name]]) {
      params[array] = flat.subarray(at, at + sizes[array]);
      at += sizes[array];
    }
    if (at !== flat.length) throw new RangeError(`the ${name} head holds ${flat.length} numbers`);
    heads[name] = params;
  }
  return heads;
}

/** What the page prints under the heat map: a summary line, and for each word its prediction,
 * the probability of the word itself and its heaviest key with its weight: {summary, rows:
 * [[word, predicted, p(word) in three decimals, "key (weight in two decimals)"], ...]}. */
export function describeReading(tokens, weights, probs, vocabulary, query) {
  const n = tokens.length, V = vocabulary.length;
  const rows = tokens.map((token, i) => {
    const heaviest = argmax(weights, i * n, n);
    return [token, vocabulary[argmax(probs, i * V, V)],
      probs[i * V + vocabulary.indexOf(token)].toFixed(3),
      `${tokens[heaviest]} (${weights[i * n + heaviest].toFixed(2)})`];
  });
  const right = rows.filter(([word, predicted]) => word === predicted).length;
  return { summary: `${query} query: ${right} of ${n} tokens predicted correctly`, rows };
}

/** Wire the explorer inside ``root``: the sentence box, the query's radio buttons, the status
 * line, the heat map and the description. ``start`` is {heads, vocabulary, longest, sentence}
 * (book.live.typed_sentence). Shows ``root``. */
export function mountTypedSentence(root, start) {
  const { vocabulary, longest } = start;
  const heads = unpackHeads(start.heads, vocabulary, longest);
  const box = root.querySelector("#live-sentence");
  const status = root.querySelector(".live-status");
  const svg = root.querySelector("svg");
  const text = root.querySelector(".live-description");
  const table = root.querySelector("table");
  box.value = start.sentence;
  const read = () => {
    const query = root.querySelector("input[name=live-query]:checked").value;
    const ids = encode(box.value, vocabulary, longest);
    box.toggleAttribute("aria-invalid", ids instanceof Error);
    // a message in bold, not a result (bold reads in both colour themes, where a red may not)
    status.style.fontWeight = ids instanceof Error ? "bold" : "";
    if (ids instanceof Error) {
      status.textContent = ids.message;
      svg.style.opacity = text.style.opacity = table.style.opacity = "0.4"; // no longer the box's
      return;
    }
    svg.style.opacity = text.style.opacity = table.style.opacity = "";
    const tokens = ids.map((t) => vocabulary[t]);
    const { weights, probs } = forward(heads[query], ids);
    drawHeatMap(svg, tokens, tokens, weights, {
      blank: (i, j) => i === j, // where a word would read itself, which the heads never do
      title: (i, j, w) => (i === j ? `${named(tokens, i)} may not read itself` :
        `${named(tokens, i)} reads ${named(tokens, j)} with weight ${w.toFixed(3)}`),
    });
    const { summary, rows } = describeReading(tokens, weights, probs, vocabulary, query);
    text.textContent = summary;
    table.tBodies[0].replaceChildren();
    for (const cells of rows) {
      const row = table.tBodies[0].insertRow();
      for (const cell of cells) row.insertCell().textContent = cell;
      if (cells[0] !== cells[1]) row.style.fontWeight = "bold"; // a word predicted wrong
    }
    status.textContent = `${tokens.length} words read by the ${query} query's head in this page`;
    root.dataset.shown = `${query}: ${tokens.join(" ")}`;
  };
  root.querySelector("form").addEventListener("submit", (event) => event.preventDefault());
  box.addEventListener("input", read);
  for (const radio of root.querySelectorAll("input[name=live-query]")) {
    radio.addEventListener("change", read);
  }
  root.hidden = false;
  read();
}
