// The live explorers' heat maps of attention weights, drawn in SVG (the static figures are
// book/plots.py's heatmap): one row per query, one column per key, white at a weight of 0 to
// the book's blue at 1, each cell's number as its data-tip (which the page's cells.js shows on
// hover or tap, as it does for a figure's cells), and rings where the caller marks a cell.  Used
// by the heads' typed sentence (cloze_page.mjs) and the translators (translation_page.mjs).
import { shade } from "./colours.mjs";

const SVG = "http://www.w3.org/2000/svg";
const MARKER = "#CC79A7"; // plots.MARKER: the marked cell's ring
const BLANK = "#eeeeee"; // a cell that cannot hold a weight (a word reading itself)

/** An SVG element `name` with `attributes`, holding `text` when given. */
export function element(name, attributes = {}, text = null) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (text !== null) node.textContent = text;
  return node;
}

/** The name a cell's tip gives row or column `k` of `labels`: the word in quotes, with its
 * position where the same word comes more than once (the figures' tips do the same,
 * _ext/cells.js). */
export function named(labels, k) {
  const word = `“${labels[k]}”`;
  return labels.indexOf(labels[k]) === labels.lastIndexOf(labels[k]) ? word :
    `${word} (position ${k})`;
}

/** Draw `weights` (rows.length, cols.length) into `svg`: `rows` labelled down the side, `cols`
 * along the top, slanted.  Options: title(i, j, w) the text a cell shows on hover or tap; blank(i, j)
 * true for a cell drawn grey, holding no weight; rings, [i, j] cells to ring.  The drawing
 * scales to the svg's width: cells of at most 24 units, the whole grid about 300 wide, with
 * room for the longest labels as the browser draws them; put it in a box that scrolls
 * sideways (cells stay at least 11 pixels wide on the screen). */
export function drawHeatMap(svg, rows, cols, weights, options = {}) {
  const { title = (i, j, w) => w.toFixed(3), blank = () => false, rings = [] } = options;
  svg.replaceChildren();
  const n = rows.length, m = cols.length;
  const cell = Math.min(24, 300 / Math.max(n, m));
  const size = Math.min(11, cell * 0.7);
  const rowLabels = rows.map((label) => element("text", { "font-size": size,
    "text-anchor": "end" }, label));
  const colLabels = cols.map((label) => element("text", { x: 0, y: 0, "font-size": size },
    label));
  svg.append(...rowLabels, ...colLabels);
  // the labels' lengths as drawn, so that none is cut at an edge (estimated at 0.75 em a
  // letter where the svg is not drawn yet)
  const longest = (labels, texts) => Math.max(...labels.map((node, k) =>
    node.getComputedTextLength?.() || 0.75 * size * texts[k].length));
  const rowWidth = longest(rowLabels, rows), colLength = longest(colLabels, cols);
  // a column label slants up and to the right at 60°
  const left = 8 + rowWidth, top = 6 + size + 0.87 * colLength;
  const width = left + m * cell + Math.max(8, 0.5 * colLength + 0.6 * size - 0.35 * cell);
  svg.setAttribute("viewBox", `0 0 ${width} ${top + n * cell + 4}`);
  // on the screen, a small map is not blown up past 1.3 pixels a unit (its text at most about
  // 14 px), a large one may grow to cells of 14 pixels, and keeps cells of at least 11 pixels,
  // its box scrolling sideways
  svg.dataset.widest ??= svg.style.maxWidth || "100%";
  svg.style.maxWidth =
    `min(${svg.dataset.widest}, ${Math.round(Math.max(1.3, 14 / cell) * width)}px)`;
  svg.style.minWidth = `${Math.round((width * 11) / cell)}px`;
  rowLabels.forEach((node, i) => {
    node.setAttribute("x", left - 4);
    node.setAttribute("y", top + i * cell + cell * 0.7);
  });
  colLabels.forEach((node, j) => {
    node.setAttribute("transform",
      `translate(${left + j * cell + cell * 0.65}, ${top - 4}) rotate(-60)`);
  });
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < m; j++) {
      const w = weights[i * m + j];
      const empty = blank(i, j);
      const rect = element("rect", { x: left + j * cell, y: top + i * cell, width: cell,
        height: cell, fill: empty ? BLANK : shade(w).background, stroke: "#ffffff",
        "stroke-width": 0.5, "data-weight": w });
      rect.setAttribute("data-tip", title(i, j, w));
      svg.append(rect);
    }
  }
  for (const [i, j] of rings) {
    // a white halo under the ring, so that it shows on the darkest cells too
    for (const [colour, extra, name] of [["#ffffff", 1.5, "halo"], [MARKER, 0, "ring"]]) {
      svg.append(element("circle", { cx: left + (j + 0.5) * cell, cy: top + (i + 0.5) * cell,
        r: cell * 0.32, fill: "none", stroke: colour, class: name,
        "stroke-width": Math.max(1.2, cell / 9) + extra, "pointer-events": "none" }));
    }
  }
}
