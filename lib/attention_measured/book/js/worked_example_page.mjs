// The self-attention worked example, in the page (book/live.py's worked_example): the reader
// edits X, W_Q, W_K and W_V, turns the division by √d and each entry of the mask on and off,
// and Q, K and V, the scores, the weights and the outputs of self_attention.mjs follow at
// once.  A bad entry is outlined and told of on one message line under the inputs, whose
// place is kept so that nothing moves while the reader types; the last good result stays,
// dimmed.
import { shade } from "./colours.mjs";
import { causal_mask, empty_rows, self_attention } from "./self_attention.mjs";

export const LARGEST = 1e6; // the largest entry in size; its scores stay finite (below 1e27)
// what an entry may be, said once in the frame
export const RANGE = `entries: numbers from −${LARGEST.toLocaleString("en-US")} to ` +
  `${LARGEST.toLocaleString("en-US")}`;
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
const NOT_FINITE = /^[+-]?(inf|infinity|nan)$/i;
const MASKED = "–"; // a score the mask removes

/** The text of one box as a Number, or an Error whose message says what is wrong with it (the
 * frame states the range once, RANGE).  Decimals and exponents are accepted ("-0.5", "2e-3"),
 * and "−" (U+2212) as a minus sign. */
export function parseEntry(text) {
  const trimmed = String(text).trim().replace(/\u2212/g, "-");
  const quoted = `“${trimmed.length > 20 ? `${trimmed.slice(0, 20)}…` : trimmed}”`;
  if (trimmed === "") return new Error("type a number here.");
  if (NOT_FINITE.test(trimmed)) return new Error(`${quoted} is not a finite number.`);
  if (!NUMBER.test(trimmed)) return new Error(`${quoted} is not a number.`);
  const value = Number(trimmed);
  if (!Number.isFinite(value)) return new Error(`${quoted} is not a finite number.`);
  if (Math.abs(value) > LARGEST) return new Error(`${quoted} is out of range.`);
  return value === 0 ? 0 : value; // -0 is 0
}

/** A number for a cell: `digits` decimals, or 4 significant digits from 1e5 on; never "-0". */
export function formatNumber(x, digits) {
  const text = Math.abs(x) >= 1e5 ? x.toPrecision(4) : x.toFixed(digits);
  return /^-[0.]+$/.test(text) ? text.slice(1) : text;
}

function make(name, attributes = {}, text = null) {
  const node = document.createElement(name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (text !== null) node.textContent = text;
  return node;
}

const CELL = "padding: 1px 3px; font-variant-numeric: tabular-nums; text-align: ";
const TABLE = "border-collapse: collapse; margin: 0; font-size: 0.85rem";
const HEAD = "padding: 0 3px; font-weight: normal; font-size: 0.8rem; text-align: ";
const ROW_HEAD = "padding: 1px 4px 1px 0; font-weight: normal; text-align: left";
const ROW = "display: flex; flex-wrap: wrap; align-items: flex-start; gap: 0.4rem 1.2rem";

/** A table with a caption (HTML) and rows labelled by `labels` (none where null), its columns
 * headed by `columns` (none where null); `cell(i, j)` makes the content of row i, column j,
 * which is aligned, with its heading, by `align`.  A caption stays on one line unless `wrap`. */
function grid(caption, labels, rows, cols, cell, { align = "right", columns = null,
  wrap = false } = {}) {
  const table = make("table", { style: TABLE });
  const title = make("caption", { style: "caption-side: top; text-align: left; padding: 0;" +
    ` color: inherit; white-space: ${wrap ? "normal; line-height: 1.3" : "nowrap"}` });
  title.innerHTML = caption;
  table.append(title);
  if (columns) {
    const tr = make("tr");
    if (labels) tr.append(make("td"));
    tr.append(...columns.map((c) => make("th", { scope: "col", style: HEAD + align }, c)));
    table.append(tr);
  }
  for (let i = 0; i < rows; i++) {
    const tr = make("tr");
    if (labels) tr.append(make("th", { scope: "row", style: ROW_HEAD }, labels[i]));
    for (let j = 0; j < cols; j++) {
      const td = make("td", { style: CELL + align });
      td.append(cell(i, j));
      tr.append(td);
    }
    table.append(tr);
  }
  return table;
}

/** A block holding a table and, under it, anything else (the mask's buttons). */
function block(table, under = null) {
  const div = make("div", { style: "flex: 0 0 auto" });
  div.append(table);
  if (under) div.append(under);
  return div;
}

const numbered = (count) => Array.from({ length: count }, (_, j) => String(j + 1));

/** Wire the explorer inside ``root``: ``start`` is {tokens, X, W_Q, W_K, W_V}, the matrices
 * as arrays of rows, the page's own numbers.  Builds a box for every entry, with one message
 * line under them all; the tables of Q, K and V; the √d switch; the mask's checkboxes with the
 * causal and "all on" presets; and the tables of scores, weights and outputs; recomputes on
 * every edit.  Shows ``root`` (hidden where JavaScript is off). */
export function mountWorkedExample(root, start) {
  const { tokens } = start;
  const n = tokens.length;
  const d_model = start.X[0].length;
  const d = start.W_Q[0].length;
  const dv = start.W_V[0].length;
  const shapes = { X: [n, d_model], W_Q: [d_model, d], W_K: [d_model, d], W_V: [d_model, dv] };
  const quoted = tokens.map((t) => `“${t}”`);
  // the container whose width the boxes share on a narrow screen (cqi, below)
  root.style.containerType = "inline-size";

  // what an entry may be; the four matrices of boxes; one message line under them all, with
  // room kept for two lines so that nothing under it moves while the reader types
  const range = make("p", { id: `${root.id}-range`, class: "live-range",
    style: "margin: 0 0 0.3rem; font-size: 0.85rem" }, RANGE);
  const message = make("p", { id: `${root.id}-message`, class: "live-message",
    "aria-live": "polite",
    style: "margin: 0.2rem 0 0; font-size: 0.85rem; line-height: 1.3; min-height: 2.6em" });
  const boxes = {};
  const inputs = make("div", { class: "live-inputs", style: ROW });
  for (const [name, [rows, cols]] of Object.entries(shapes)) {
    const label = name === "X" ? "X" : `W<sub>${name.slice(2)}</sub>`;
    const where = (i, j) => `${name}, row ${name === "X" ? quoted[i] : i + 1}, column ${j + 1}`;
    // 6em inside the box's padding, room for "-123456.75", or less where the widest matrix
    // (X with its row labels, or a W) would not fit the frame's width (100cqi) on a narrow
    // screen: each column also takes the box's padding and border and the cell's padding
    const width = `min(6em, calc((100cqi - 3rem) / ${Math.max(d_model, d, dv)} - 16px))`;
    boxes[name] = [];
    const table = grid(`${label} <span style="font-size: 0.8em">(${rows}, ${cols})</span>`,
      name === "X" ? tokens : null, rows, cols, (i, j) => {
        const box = make("input", { inputmode: "decimal", autocomplete: "off", size: 4,
          "aria-label": where(i, j), value: String(start[name][i][j]),
          style: `box-sizing: content-box; width: ${width}; font: inherit; text-align: right;` +
            " padding: 1px 2px" });
        box.where = where(i, j);
        boxes[name].push(box);
        return box;
      });
    inputs.append(block(table));
  }

  // Q, K and V, from the boxes: what the page's prose reads off
  const cells = {};
  const table = (name, caption, cols, columns, into, options = {}) => {
    cells[name] = [];
    const made = grid(caption, tokens, n, cols, () => {
      const span = make("span", { class: `live-${name}` });
      cells[name].push(span);
      return span;
    }, { columns, ...options });
    made.classList.add(`live-${name}-table`);
    into.append(block(made));
    return made;
  };
  const projections = make("div", { class: "live-projections", style: ROW });
  for (const [name, cols] of [["Q", d], ["K", d], ["V", dv]]) {
    table(name, `${name} = X W<sub>${name}</sub>`, cols, numbered(cols), projections);
  }

  // the √d switch, and the mask with its presets
  const scale = make("input", { type: "checkbox", id: `${root.id}-scale`,
    style: "margin-right: 0.4em" });
  scale.checked = true;
  const scaleLabel = make("label", { for: scale.id });
  scaleLabel.innerHTML = `divide the scores by √<i>d</i> = √${d}`;
  const switches = make("p", { style: "margin: 0.6rem 0 0.3rem" });
  switches.append(scale, scaleLabel);
  const checks = [];
  const maskTable = grid("mask: row <i>i</i> may attend to column <i>j</i>", tokens, n, n,
    (i, j) => {
      const box = make("input", { type: "checkbox",
        "aria-label": `${quoted[i]} may attend to ${quoted[j]}` });
      box.checked = true;
      checks.push(box);
      return box;
    }, { align: "center", columns: tokens });
  maskTable.classList.add("live-mask-table");
  const presets = make("p", { style: "margin: 0.2rem 0 0; display: flex; flex-wrap: wrap;" +
    " gap: 0.3rem" });
  const buttons = { causal: make("button", { type: "button" }, "causal"),
    all: make("button", { type: "button" }, "all on"),
    reset: make("button", { type: "button" }, "the page's numbers") };
  presets.append(...Object.values(buttons));
  const controls = block(maskTable, presets);

  // the results, and a line for what needs saying about them
  // (their grids, of n rows each, lined up at the foot, under captions of one or more lines)
  const results = make("div", { class: "live-results", style: `${ROW}; margin-top: 0.6rem;` +
    " align-items: flex-end" });
  const notes = make("p", { class: "live-notes", role: "status", "aria-live": "polite",
    style: "margin: 0.4rem 0 0; font-size: 0.9rem" });
  const scoresTable = table("scores", `scores Q Kᵀ / √${d}`, n, tokens, results);
  table("weights", "weights <span style=\"font-size: 0.8em\">(each row sums to 1, or is all 0" +
    " where the mask leaves no key)</span>", n, tokens, results, { wrap: true });
  table("output", "output = weights × V", dv, numbered(dv), results);
  root.append(range, inputs, message, projections, switches, controls, results, notes);

  // every box's number, or null after saying on the message line what the first bad box holds
  const read = () => {
    const values = {};
    const bad = [];
    for (const [name, list] of Object.entries(boxes)) {
      values[name] = new Float64Array(list.length);
      list.forEach((box, k) => {
        const value = parseEntry(box.value);
        if (value instanceof Error) {
          box.setAttribute("aria-invalid", "true");
          box.setAttribute("aria-describedby", `${message.id} ${range.id}`);
          box.style.outline = "2px solid #D55E00"; // vermilion (Okabe and Ito, as plots.py)
          bad.push(`${box.where}: ${value.message}`);
        } else {
          box.removeAttribute("aria-invalid");
          box.removeAttribute("aria-describedby");
          box.style.outline = "";
          values[name][k] = value;
        }
      });
    }
    const more = bad.length > 2 ? ` And ${bad.length - 1} more boxes.` :
      bad.length === 2 ? " And one more box." : "";
    message.textContent = bad.length ? bad[0] + more : "";
    return bad.length === 0 ? values : null;
  };

  const dim = (opacity) => {
    results.style.opacity = opacity;
    projections.style.opacity = opacity;
  };
  const show = (name, values, digits) => cells[name].forEach((c, k) => {
    c.textContent = formatNumber(values[k], digits);
    c.dataset.value = String(values[k]);
  });

  const run = () => {
    const values = read();
    if (values === null) {
      dim("0.4");
      notes.textContent = "Until every box holds a number, Q, K, V, the scores, the weights " +
        "and the outputs are those of the last good entries, dimmed.";
      return;
    }
    const mask = checks.map((c) => c.checked);
    let r;
    try {
      r = self_attention(values.X, values.W_Q, values.W_K, values.W_V, n,
        { scale: scale.checked, mask });
    } catch (error) {
      dim("0.4");
      notes.textContent = error.message;
      return;
    }
    dim("");
    show("Q", r.Q, 2);
    show("K", r.K, 2);
    show("V", r.V, 2);
    scoresTable.caption.innerHTML = scale.checked ? `scores Q Kᵀ / √${d}` : "scores Q Kᵀ";
    show("scores", r.scores, 2);
    cells.scores.forEach((c, k) => {
      const i = Math.floor(k / n), j = k % n;
      if (mask[k]) {
        c.parentElement.removeAttribute("title");
        delete c.dataset.masked;
      } else {
        c.textContent = MASKED;
        c.dataset.masked = "true";
        c.parentElement.title = `the mask removed this score: ${quoted[i]} may not attend ` +
          `to ${quoted[j]}`;
      }
    });
    cells.weights.forEach((c, k) => {
      const w = r.weights[k], i = Math.floor(k / n), j = k % n;
      c.textContent = formatNumber(w, 3);
      c.dataset.value = String(w);
      const { background, color } = shade(w);
      Object.assign(c.parentElement.style, { background, color });
      c.parentElement.title = `${quoted[i]} gives ${quoted[j]} the weight ${w.toFixed(6)}`;
    });
    show("output", r.output, 2);
    const empty = empty_rows(mask, n).map((i) => quoted[i]);
    const names = empty.length > 1 ? `${empty.slice(0, -1).join(", ")} and ${empty.at(-1)}`
      : empty[0];
    notes.textContent = empty.length === 0 ? "" : `The mask leaves ${names} no key to attend ` +
      `to: as the library's softmax does, the page gives ${empty.length > 1 ? "those rows" :
        "that row"} weights of zero, so ${empty.length > 1 ? "their outputs are" :
        "its output is"} zero too.`;
    root.dataset.computed = String(Number(root.dataset.computed ?? 0) + 1);
  };

  const setMask = (on) => {
    checks.forEach((c, k) => (c.checked = on[k] === 1));
    run();
  };
  buttons.causal.addEventListener("click", () => setMask(causal_mask(n)));
  buttons.all.addEventListener("click", () => setMask(new Uint8Array(n * n).fill(1)));
  buttons.reset.addEventListener("click", () => {
    for (const [name, list] of Object.entries(boxes)) {
      list.forEach((box, k) => (box.value = String(start[name].flat()[k])));
    }
    scale.checked = true;
    setMask(new Uint8Array(n * n).fill(1));
  });
  root.addEventListener("input", run);
  root.hidden = false;
  run();
}
