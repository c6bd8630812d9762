// Part I's seed explorer, in the page: the reader types any init seed, the network of
// lesson.mjs trains on it in the browser, and the page draws what the static twin draws for
// sixteen seeds (marked_step_explorers.change_the_seed) and prints the same description,
// digit for digit, as the library's describe_seed.
import { STEPS, argmax, seed_report } from "./lesson.mjs";

const SVG = "http://www.w3.org/2000/svg";
// the book's colours (book/plots.py): neutral bars, the marker, "after a drop", the reader's seed
const COLOURS = {
  bar: "#9a9a9a", marker: "#CC79A7", effect: "#009E73", yours: "#0072B2", ink: "#222222",
};
const LARGEST = 2n ** 64n - 1n;

/** The text of the seed box as a seed (a Number, or a BigInt past 2**53), or an Error whose
 * message says what a seed must be. */
export function parseSeed(text) {
  const trimmed = String(text).trim();
  const rule = "a seed is a whole number from 0 to 2^64 − 1";
  if (trimmed === "") return new Error(`Type a seed: ${rule}.`);
  if (!/^\d+$/.test(trimmed)) return new Error(`“${trimmed.slice(0, 40)}” is not a seed: ${rule}.`);
  const big = BigInt(trimmed);
  if (big > LARGEST) {
    const shown = trimmed.length > 40 ? `${trimmed.slice(0, 40)}…` : trimmed;
    return new Error(`${shown} is too large: ${rule}.`);
  }
  return big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
}

/** The share of the hundred seeds whose marker weight is lower; a seed of the hundred is
 * compared by its value in the sweep, as marked_step_explorers.seed_report does. */
export function shareBelow(seed, weight, hundred) {
  const at = hundred.seeds.findIndex((s) => BigInt(s) === BigInt(seed));
  const own = at >= 0 ? hundred.weights[at] : weight;
  return hundred.weights.filter((w) => w < own).length / hundred.weights.length;
}

/** marked_step_explorers.describe_seed, for a report of lesson.seed_report. */
export function describeSeed(report, share, example = 0) {
  const heavy = argmax(report.weights, 0, report.weights.length);
  const moved = argmax(report.effects, 0, report.effects.length);
  return [
    `init seed ${report.seed}: held-out accuracy ${report.heldout_accuracy.toFixed(4)}`,
    `  mean weight on the marker ${report.marker_weight.toFixed(4)}`,
    `  the heaviest step is the marker in ${report.marker_hit_rate.toFixed(4)} ` +
      "of the held-out sequences",
    `  among the hundred seeds, ${share.toFixed(2)} put less weight on the marker`,
    `held-out example ${example} (marker step ${report.marker})`,
    `  heaviest step ${heavy} (weight ${report.weights[heavy].toFixed(3)}), ` +
      `most influential step ${moved} (|Δp| ${report.effects[moved].toFixed(3)})`,
  ].join("\n");
}

function element(name, attributes = {}, text = null) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (text !== null) node.textContent = text;
  return node;
}

/** One panel of bars over the 12 steps, the marked step in the marker's colour. */
function barPanel(svg, top, values, marker, colour, title, largest) {
  const left = 34, width = 300, height = 70;
  svg.append(element("text", { x: 2, y: top - 6, "font-size": 11, fill: COLOURS.ink }, title));
  svg.append(element("line", { x1: left, y1: top + height, x2: left + width, y2: top + height,
    stroke: COLOURS.ink }));
  const slot = width / STEPS;
  values.forEach((value, step) => {
    const h = (Math.min(value, largest) / largest) * height;
    const bar = element("rect", { x: left + step * slot + 3, y: top + height - h,
      width: slot - 6, height: h, fill: step === marker ? COLOURS.marker : colour });
    bar.append(element("title", {}, `step ${step}: ${value.toFixed(3)}`));
    svg.append(bar);
    svg.append(element("text", { x: left + step * slot + slot / 2, y: top + height + 13,
      "font-size": 10, "text-anchor": "middle",
      fill: step === marker ? COLOURS.marker : COLOURS.ink }, String(step)));
  });
  for (const [y, label] of [[top + 4, largest.toFixed(1)], [top + height + 3, "0"]]) {
    svg.append(element("text", { x: left - 4, y, "font-size": 10, "text-anchor": "end",
      fill: COLOURS.ink }, label));
  }
}

/** The hundred seeds' marker weights as a histogram of 20 bins on [0, 1], its bars' heights
 * on a log scale as in the static twin (a bin of one seed stays visible beside one of ninety),
 * with the reader's seed as a line. */
function hundredPanel(svg, top, weights, weight) {
  const left = 34, width = 300, height = 40, bins = 20;
  svg.append(element("text", { x: 2, y: top - 6, "font-size": 11, fill: COLOURS.ink },
    "the hundred seeds' weights on the marker; yours in blue"));
  const counts = new Array(bins).fill(0);
  for (const w of weights) counts[Math.min(bins - 1, Math.floor(w * bins))]++;
  const tallest = Math.log1p(Math.max(...counts));
  counts.forEach((count, bin) => {
    const h = (Math.log1p(count) / tallest) * height;
    const bar = element("rect", { x: left + (bin * width) / bins + 1, y: top + height - h,
      width: width / bins - 2, height: h, fill: COLOURS.bar });
    const from = bin / bins;
    bar.append(element("title", {}, `${count} seeds from ${from.toFixed(2)} to ` +
      `${(from + 1 / bins).toFixed(2)}`));
    svg.append(bar);
  });
  svg.append(element("line", { x1: left, y1: top + height, x2: left + width, y2: top + height,
    stroke: COLOURS.ink }));
  svg.append(element("line", { x1: left + weight * width, y1: top - 2, x2: left + weight * width,
    y2: top + height, stroke: COLOURS.yours, "stroke-width": 2.5 }));
  for (const x of [0, 0.5, 1]) {
    svg.append(element("text", { x: left + x * width, y: top + height + 13, "font-size": 10,
      "text-anchor": "middle", fill: COLOURS.ink }, String(x)));
  }
}

/** Draw a report into the svg (its old drawing removed). */
function draw(svg, report, hundred) {
  svg.replaceChildren();
  barPanel(svg, 20, Array.from(report.weights), report.marker, COLOURS.bar,
    "weights on held-out example 0 (marker in pink)", 1);
  barPanel(svg, 130, Array.from(report.effects), report.marker, COLOURS.effect,
    "|Δp| when each step is dropped", 0.5);
  hundredPanel(svg, 240, hundred.weights, report.marker_weight);
}

/** Wire the explorer inside ``root``: a form with a seed box, a status line, an svg and a
 * description; ``hundred`` is {seeds, weights} of the sweep. Shows ``root`` (hidden where
 * JavaScript is off, so that only the static twin remains). */
export function mountSeedExplorer(root, hundred) {
  const form = root.querySelector("form");
  const input = root.querySelector("input");
  const status = root.querySelector(".live-status");
  const svg = root.querySelector("svg");
  const text = root.querySelector(".live-description");
  const run = () => {
    const seed = parseSeed(input.value);
    if (seed instanceof Error) {
      status.textContent = seed.message;
      input.setAttribute("aria-invalid", "true");
      svg.style.opacity = text.style.opacity = "0.4"; // the last result, no longer the box's
      return;
    }
    input.removeAttribute("aria-invalid");
    svg.style.opacity = text.style.opacity = "";
    const started = performance.now();
    let report;
    try {
      report = seed_report(seed, 0);
    } catch (error) {
      status.textContent = error.message;
      return;
    }
    const took = performance.now() - started;
    const share = shareBelow(seed, report.marker_weight, hundred);
    draw(svg, report, hundred);
    text.textContent = describeSeed(report, share, 0);
    status.textContent = `seed ${seed}: trained in this page in ${Math.round(took)} ms`;
    root.dataset.seed = String(seed);
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    run();
  });
  root.hidden = false;
  run();
}
