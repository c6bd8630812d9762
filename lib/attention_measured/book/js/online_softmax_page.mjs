// The online softmax stepped block by block in the page (chapters/seq2seq/05-what-attention-
// costs, "The online softmax"): the reader types one query's scores and its keys' values, picks
// a block size, and steps through core.mjs's online_softmax, seeing the running maximum, the
// rescaling of the past, the running sums and, after the last block, the same output as the
// softmax of all the scores at once.  The static twin is the page's printed table of the same
// steps (attention.online_softmax); tests/js/online_softmax.test.mjs holds the numbers to the
// library's, and the browser tests step the built page.
import { online_softmax, softmax } from "./core.mjs";

export const MOST_KEYS = 16; // keys the boxes take: two rows of cells that fit a phone
export const LARGEST = 1e6; // the largest score or value, in size: exp and the sums stay finite
const PER_ROW = 8; // keys drawn in one row

const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i;

/** The text of a box of numbers, separated by spaces or commas, as an array of Numbers, or an
 * Error saying what is wrong. With `masked`, "-inf" (a masked key) is a number too. */
export function parseRow(text, what, masked = false) {
  const tokens = String(text).replaceAll("−", "-").split(/[\s,]+/).filter((t) => t !== "");
  const rule = `${what}: 1 to ${MOST_KEYS} numbers from −1000000 to 1000000, separated by ` +
    `spaces${masked ? ", with -inf for a masked key" : ""}`;
  const wrong = (message) => Object.assign(new Error(message), { box: what });
  if (tokens.length === 0) return wrong(`Type the ${rule}.`);
  if (tokens.length > MOST_KEYS) return wrong(`${tokens.length} are too many ${rule}.`);
  const row = [];
  for (const token of tokens) {
    if (masked && /^-(inf|infinity|∞)$/i.test(token)) {
      row.push(-Infinity);
    } else if (!NUMBER.test(token)) {
      return wrong(`“${token.slice(0, 20)}” is not a number. The ${rule}.`);
    } else if (!(Math.abs(Number(token)) <= LARGEST)) {
      return wrong(`${token.slice(0, 20)} is too large. The ${rule}.`);
    } else {
      row.push(Number(token));
    }
  }
  return row;
}

/** What the reader typed, checked together: {scores, values, block} or an Error. */
export function parseInputs(scoresText, valuesText, blockText) {
  const scores = parseRow(scoresText, "scores", true);
  if (scores instanceof Error) return scores;
  const values = parseRow(valuesText, "values");
  if (values instanceof Error) return values;
  if (values.length !== scores.length) {
    return Object.assign(new Error(`There are ${scores.length} scores and ${values.length} ` +
      "values: type one value per score."), { box: "values" });
  }
  const trimmed = String(blockText).trim();
  const block = Number(trimmed);
  if (!/^\d+$/.test(trimmed) || block < 1 || block > MOST_KEYS) {
    return Object.assign(new Error(`The block is a whole number of keys from 1 to ${MOST_KEYS}.`),
      { box: "block" });
  }
  return { scores, values, block };
}

const fixed = (x, digits = 4) => (x === -Infinity ? "−∞" : x.toFixed(digits).replace("-", "−"));

/** The description under the table once every block is read: the online result beside the
 * softmax of all the scores at once. */
export function describeResult(scores, values, steps) {
  const last = steps[steps.length - 1];
  const allowed = scores.map((s) => s > -Infinity); // -inf: a masked key
  const weights = softmax(Float64Array.from(scores), scores.length, allowed);
  const atOnce = weights.reduce((sum, w, j) => sum + w * values[j], 0);
  if (last.total === 0) {
    return "Every key is masked: no block raised the maximum above −∞ and l stayed 0. The " +
      "book gives such a query the output 0, in the online softmax as in the softmax at " +
      "once (plain numpy would give nan, from 0 / 0).";
  }
  const online = last.acc[0] / last.total;
  const gap = Math.abs(online - atOnce);
  const all = scores.length === 1 ? "the one score" : `all ${scores.length} scores`;
  return `After ${steps.length} block${steps.length > 1 ? "s" : ""}: o / l = ${fixed(online)}.\n` +
    `The softmax of ${all} at once, times the values: ${fixed(atOnce)}\n` +
    (gap === 0 ? "(exactly equal)." : `(they differ by ${gap.toExponential(1)}, rounding only).`);
}

const SVG = "http://www.w3.org/2000/svg";
const COLOURS = { read: "#0072B2", now: "#E69F00", unread: "#dddddd", ink: "#222222" };

function element(name, attributes = {}, text = null) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (text !== null) node.textContent = text;
  return node;
}

/** A score or value in a cell of at most seven characters. */
export function short(x) {
  if (x === -Infinity) return "−∞";
  const text = x !== 0 && (Math.abs(x) >= 1000 || Math.abs(x) < 0.01) ?
    x.toExponential(1).replace("e+", "e") : String(Number(x.toPrecision(3)));
  return text.replaceAll("-", "−");
}

/** The keys in rows of eight cells, score above value: read blocks in blue, the block just read
 * in orange, the rest grey. */
function drawKeys(svg, scores, values, steps, shown) {
  svg.replaceChildren();
  const m = scores.length, width = 39, rows = Math.ceil(m / PER_ROW), height = 50;
  const readTo = shown ? steps[shown - 1].stop : 0, justRead = shown ? steps[shown - 1].start : 0;
  svg.setAttribute("viewBox", `0 0 ${40 + PER_ROW * width} ${rows * height + 6}`);
  for (let row = 0; row < rows; row++) {
    const y = row * height + 10;
    svg.append(element("text", { x: 0, y: y + 14, "font-size": 10, fill: COLOURS.ink }, "score"));
    svg.append(element("text", { x: 0, y: y + 34, "font-size": 10, fill: COLOURS.ink }, "value"));
    svg.append(element("text", { x: 40, y: y - 2, "font-size": 8, fill: COLOURS.ink },
      `key ${row * PER_ROW}`));
  }
  scores.forEach((score, j) => {
    const fill = j >= readTo ? COLOURS.unread : j >= justRead ? COLOURS.now : COLOURS.read;
    const x = 40 + (j % PER_ROW) * width, y = Math.floor(j / PER_ROW) * height + 10;
    svg.append(element("rect", { x, y, width: width - 2, height: 40, rx: 3, fill,
      "fill-opacity": j >= readTo ? 1 : 0.3 }));
    for (const [dy, number] of [[14, score], [34, values[j]]]) {
      svg.append(element("text", { x: x + width / 2 - 1, y: y + dy, "font-size": 10,
        "text-anchor": "middle", fill: COLOURS.ink }, short(number)));
    }
  });
}

/** The running state after each block read so far, one row per block. */
function fillTable(table, steps, shown) {
  const body = table.tBodies[0];
  body.replaceChildren();
  steps.slice(0, shown).forEach((step, b) => {
    const row = body.insertRow();
    const keys = step.stop - step.start === 1 ? `${step.start}` : `${step.start}–${step.stop - 1}`;
    // three decimals, so that six columns fit a phone; the result below has four
    const ratio = step.total > 0 ? fixed(step.acc[0] / step.total, 3) : "–";
    for (const cell of [keys, fixed(step.top, 3), b === 0 ? "–" : fixed(step.rescale, 3),
      fixed(step.total, 3), fixed(step.acc[0], 3), ratio]) {
      row.insertCell().textContent = cell;
    }
    if (b === shown - 1) row.style.background = "#fdf0d9";
  });
}

/** Wire the stepper inside ``root``: boxes for the scores, the values and the block, buttons
 * to step back, step on and read every block, a drawing of the keys, the table of the running
 * state and the result. Shows ``root`` (hidden where JavaScript is off). */
export function mountOnlineSoftmax(root) {
  const [scoresBox, valuesBox, blockBox] = root.querySelectorAll("input");
  const status = root.querySelector(".live-status");
  const svg = root.querySelector("svg");
  const table = root.querySelector("table");
  const text = root.querySelector(".live-description");
  let current = null, shown = 0;
  const show = () => {
    const { scores, values, steps } = current;
    drawKeys(svg, scores, values, steps, shown);
    fillTable(table, steps, shown);
    text.textContent = shown === steps.length ? describeResult(scores, values, steps) : "";
    const next = shown < steps.length ? steps[shown] : null;
    const keys = next && (next.stop - next.start === 1 ? `key ${next.start}` :
      `keys ${next.start} to ${next.stop - 1}`);
    status.textContent = shown === 0 ? `Nothing read yet: “read the next block” reads ${keys}.` :
      `block ${shown} of ${steps.length} read` + (next ? `; next: ${keys}` : "");
    root.dataset.shown = String(shown);
  };
  const read = () => {
    const typed = parseInputs(scoresBox.value, valuesBox.value, blockBox.value);
    const wrong = typed instanceof Error;
    const boxes = { scores: scoresBox, values: valuesBox, block: blockBox };
    for (const [name, box] of Object.entries(boxes)) {
      box.toggleAttribute("aria-invalid", wrong && typed.box === name);
    }
    if (wrong) {
      status.textContent = typed.message;
      svg.style.opacity = table.style.opacity = text.style.opacity = "0.4";
      current = null;
      return;
    }
    svg.style.opacity = table.style.opacity = text.style.opacity = "";
    const steps = online_softmax(typed.scores, typed.values, 1, typed.block);
    current = { ...typed, steps };
    shown = Math.min(shown, steps.length);
    show();
  };
  root.querySelector("form").addEventListener("submit", (event) => event.preventDefault());
  for (const box of [scoresBox, valuesBox, blockBox]) {
    box.addEventListener("input", () => {
      shown = 0;
      read();
    });
  }
  for (const button of root.querySelectorAll("button[data-step]")) {
    button.addEventListener("click", () => {
      if (current === null) return;
      const move = button.dataset.step;
      const last = current.steps.length;
      shown = move === "all" ? last : move === "back" ? Math.max(0, shown - 1) :
        move === "start" ? 0 : Math.min(last, shown + 1);
      show();
    });
  }
  root.hidden = false;
  read();
}
