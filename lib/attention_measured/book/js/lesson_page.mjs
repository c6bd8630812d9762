// Part I's explorers in the page. The seed explorer: the reader types any init seed, the network
// of lesson.mjs trains on it in the browser, and the page draws what the static twin draws for
// sixteen seeds (marked_step_explorers.change_the_seed) and prints the same description, digit
// for digit, as the library's describe_seed. The drop-a-step explorer: any step of any of the
// 180 held-out examples dropped from the lesson's two runs (marked_step_explorers.drop_a_step,
// whose static twin offers six examples), described as describe_drop describes it.
import { integer, sigmoid } from "./core.mjs";
import { SPLIT, STEPS, argmax, forward, lesson_data, seed_report } from "./lesson.mjs";

const SVG = "http://www.w3.org/2000/svg";
// the book's colours (book/plots.py): neutral bars, the marker, "after a drop", the reader's seed
const COLOURS = {
  bar: "#9a9a9a", marker: "#CC79A7", effect: "#009E73", yours: "#0072B2", ink: "#222222",
  runs: ["#0072B2", "#E69F00"], after: "#009E73",
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

/** One panel of bars over the 12 steps, for `series`, [[values (T,), colour, name], ...]: one
 * series has its marked step's bar in the marker's colour; several stand side by side, the marked
 * step shaded behind them. A `dropped` step is crossed. */
function barPanel(svg, top, series, marker, title, largest, dropped = null) {
  const left = 34, width = 300, height = 70;
  svg.append(element("text", { x: 2, y: top - 6, "font-size": 11, fill: COLOURS.ink }, title));
  const slot = width / STEPS, gap = 3, each = (slot - 2 * gap) / series.length;
  if (series.length > 1) {
    svg.append(element("rect", { x: left + marker * slot + 1, y: top, width: slot - 2, height,
      fill: COLOURS.marker, "fill-opacity": 0.15 }));
  }
  svg.append(element("line", { x1: left, y1: top + height, x2: left + width, y2: top + height,
    stroke: COLOURS.ink }));
  for (let step = 0; step < STEPS; step++) {
    const group = element("g", { "data-step": step });
    if (dropped !== null) { // the whole column, its number included, drops its step when clicked
      group.append(element("rect", { x: left + step * slot, y: top, width: slot,
        height: height + 16, fill: "transparent", style: "cursor: pointer" }));
    }
    series.forEach(([values, colour], k) => {
      const h = (Math.min(values[step], largest) / largest) * height;
      const fill = series.length === 1 && step === marker ? COLOURS.marker : colour;
      group.append(element("rect", { x: left + step * slot + gap + k * each, y: top + height - h,
        width: each, height: h, fill }));
    });
    const numbers = series.map(([values, , name]) => `${name ? `${name} ` : ""}` +
      values[step].toFixed(3));
    group.append(element("title", {}, `step ${step}: ${numbers.join(", ")}`));
    svg.append(group);
    svg.append(element("text", { x: left + step * slot + slot / 2, y: top + height + 13,
      "font-size": 10, "text-anchor": "middle", "font-weight": step === marker ? "bold" : "normal",
      fill: step === marker ? COLOURS.marker : COLOURS.ink, "pointer-events": "none" },
    String(step)));
    if (step === dropped) {
      svg.append(element("text", { x: left + step * slot + slot / 2, y: top + height - 3,
        "font-size": 13, "font-weight": "bold", "text-anchor": "middle", fill: COLOURS.ink,
        "pointer-events": "none" }, "✕"));
    }
  }
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
  barPanel(svg, 20, [[Array.from(report.weights), COLOURS.bar]], report.marker,
    "weights on held-out example 0 (marker in pink)", 1);
  barPanel(svg, 130, [[Array.from(report.effects), COLOURS.effect]], report.marker,
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

// ------------------------------------------------------------------------------ drop a step

/** The text of a box that takes one of `count` indices (0 to count − 1) as a Number, or an Error
 * whose message says what `what` must be. */
export function parseIndex(text, what, count) {
  const trimmed = String(text).trim();
  const rule = `${what} is a whole number from 0 to ${count - 1}`;
  if (trimmed === "") return new Error(`Type a ${what}: a ${rule}.`);
  if (!/^\d+$/.test(trimmed)) return new Error(`“${trimmed.slice(0, 40)}” is not a ${what}: a ${rule}.`);
  const value = Number(trimmed);
  if (value > count - 1) {
    const shown = trimmed.length > 40 ? `${trimmed.slice(0, 40)}…` : trimmed;
    return new Error(`${shown} is too large: a ${rule}.`);
  }
  return value;
}

let heldout = null; // the lesson's held-out sequences, drawn once (read only)

/** marked_step_explorers.drop_report: the lesson's two runs, `runs` ([params, params] as
 * lesson.forward takes them), on held-out sequence `example` (0 to 179) with step `step` dropped
 * and the other weights renormalised. Returns {weights, without: two (T,) each, p, p_without:
 * (2,) each, the probability of label 1 before and after, marker}. */
export function dropReport(runs, example, step) {
  if (!Array.isArray(runs) || runs.length !== 2) {
    throw new TypeError("runs must be the two runs' parameters, [params, params]");
  }
  integer(example, "example", 0, SPLIT[2] - 1);
  integer(step, "step", 0, STEPS - 1);
  heldout ??= lesson_data()[1];
  const chosen = heldout.slice(example, example + 1);
  const keep = Array.from({ length: STEPS }, (_, t) => t !== step);
  const report = { weights: [], without: [], p: [], p_without: [], marker: chosen.markers[0] };
  for (const params of runs) {
    const before = forward(params, chosen.inputs);
    const after = forward(params, chosen.inputs, { keep });
    report.weights.push(before.weights);
    report.without.push(after.weights);
    report.p.push(sigmoid(before.output[0]));
    report.p_without.push(sigmoid(after.output[0]));
  }
  return report;
}

/** marked_step_explorers.describe_drop, for a report of dropReport. */
export function describeDrop(report, example, step) {
  const lines = [`held-out example ${example}: marker step ${report.marker}, dropped step ${step}`];
  for (let run = 0; run < 2; run++) {
    const [p, after] = [report.p[run], report.p_without[run]];
    lines.push(
      `run ${run + 1}: weight of step ${step} ${report.weights[run][step].toFixed(3)};  ` +
        `p(label 1) ${p.toFixed(3)} -> ${after.toFixed(3)}  ` +
        `(moved ${Math.abs(after - p).toFixed(3)})`,
    );
  }
  return lines.join("\n");
}

/** Both runs' panels, as the static twin draws them: before and after, the dropped step crossed. */
function drawDrop(svg, report, step) {
  svg.replaceChildren();
  for (let run = 0; run < 2; run++) {
    const [p, after] = [report.p[run], report.p_without[run]];
    barPanel(svg, 20 + 110 * run, [
      [Array.from(report.weights[run]), COLOURS.runs[run], "before"],
      [Array.from(report.without[run]), COLOURS.after, "after"],
    ], report.marker, `run ${run + 1}: p = ${p.toFixed(3)} → ${after.toFixed(3)}`, 1, step);
  }
  const legend = element("text", { x: 34, y: 248, "font-size": 11, fill: COLOURS.ink });
  for (const [name, colour] of [["run 1 before  ", COLOURS.runs[0]],
    ["run 2 before  ", COLOURS.runs[1]], [`after dropping step ${step}`, COLOURS.after]]) {
    legend.append(element("tspan", { fill: colour }, "■ "), element("tspan", {}, name));
  }
  svg.append(legend);
}

/** Wire the drop-a-step explorer inside ``root``: a form with a box for the held-out example and
 * one for the step, a status line, an svg whose step groups drop their step when clicked, and a
 * description. ``runs`` are the lesson's two trained runs. Shows ``root``. */
export function mountDropExplorer(root, runs) {
  const form = root.querySelector("form");
  const [exampleBox, stepBox] = root.querySelectorAll("input");
  const status = root.querySelector(".live-status");
  const svg = root.querySelector("svg");
  const text = root.querySelector(".live-description");
  const run = () => {
    const example = parseIndex(exampleBox.value, "held-out example", SPLIT[2]);
    const step = parseIndex(stepBox.value, "step", STEPS);
    const wrong = [[exampleBox, example], [stepBox, step]].filter(([box, value]) => {
      box.toggleAttribute("aria-invalid", value instanceof Error);
      return value instanceof Error;
    });
    if (wrong.length) {
      status.textContent = wrong.map(([, error]) => error.message).join(" ");
      svg.style.opacity = text.style.opacity = "0.4";
      return;
    }
    svg.style.opacity = text.style.opacity = "";
    const report = dropReport(runs, example, step);
    drawDrop(svg, report, step);
    text.textContent = describeDrop(report, example, step);
    status.textContent = `held-out example ${example} with step ${step} dropped, computed in ` +
      "this page";
    root.dataset.shown = `${example} ${step}`;
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    run();
  });
  for (const box of [exampleBox, stepBox]) box.addEventListener("input", run);
  svg.addEventListener("click", (event) => {
    const group = event.target.closest("[data-step]");
    if (group === null) return;
    stepBox.value = group.dataset.step;
    run();
  });
  root.hidden = false;
  run();
}
