// Part I ("the lesson") in JavaScript: the random stream, the marked-step data, the network of
// 19 parameters, its training and the numbers the seed explorer shows.  Twin of
//
//   core/rng.py                       check_seed, hash32, draws
//   tasks/marked_step.py              round, make_sequences, lesson_data
//   models/single_query.py            init, forward, loss_and_grads, removal_effects
//   experiments/marked_step_runs.py   train (full-batch gradient descent, core/training.fit)
//   measures/markers.py, removal.py   accuracy, marker_weight, effects
//   book/marked_step_explorers.py     seed_report
//
// See core.mjs for the layout of the arrays and how close to Python the results are.

import {
  argmax,
  binary_cross_entropy,
  drop_each_step,
  floats,
  integer,
  positive,
  seed as checkedSeed,
  shown,
  sigmoid,
  softmax,
  softmax_backward,
} from "./core.mjs";

export { argmax }; // np.argmax, for the page glue (lesson_page.mjs), written once in core.mjs

// ------------------------------------------------------------------ the random stream (rng.py)

export const MULTIPLIER = 1664525;
export const INCREMENT = 1013904223;

/** `seed` as the lesson's streams take it, an integer in [0, 2**64) (a Number below 2**53 or a
 * BigInt), or an Error naming `name`. */
export function check_seed(seed, name = "seed") {
  return checkedSeed(seed, name);
}

/** The starting state of the stream of a checked seed: rng._hash32, the finaliser of
 * MurmurHash3 with only the low 32 bits kept after each step; Math.imul keeps exactly the low
 * 32 bits of a product. */
function start(seed) {
  const v = BigInt(seed);
  const hi = Number(v >> 32n), lo = Number(v & 0xffffffffn);
  let x = lo ^ ((lo >>> 16) | (hi << 16)); // x ^ (x >> 16), low 32 bits
  x = Math.imul(x, 2246822507);
  x = Math.imul(x ^ (x >>> 13), 3266489909);
  return (x ^ (x >>> 16)) >>> 0;
}

/** The starting state (a uint32) of the stream of `seed`. */
export function hash32(seed) {
  return start(check_seed(seed));
}

/** Write the first `count` draws of the stream of a checked seed into out[at ..]. */
function fill(seed, count, out, at = 0) {
  let state = start(seed);
  for (let j = 0; j < count; j++) {
    state = (Math.imul(state, MULTIPLIER) + INCREMENT) >>> 0; // mod 2**32, exactly
    out[at + j] = state / 4294967296;
  }
  return out;
}

/** rng.draws: the first `count` uniform draws of the stream of each seed, a Float64Array
 * (count,) for one seed or (S, count) for an array of S seeds. */
export function draws(seeds, count) {
  const list = Array.isArray(seeds) ? seeds : [seeds];
  if (list.length === 0) throw new RangeError("seeds must not be empty");
  list.forEach((s) => check_seed(s, "seeds"));
  integer(count, "count");
  const out = new Float64Array(list.length * count);
  list.forEach((s, i) => fill(s, count, out, i * count));
  return out;
}

// ------------------------------------------------------------ the data (tasks/marked_step.py)

export const STEPS = 12; // T
export const CHANNELS = 2; // C: the reading and the marker flag
export const DATA_SEED = 20260218;
export const N_SEQUENCES = 720;
export const SPLIT = [360, 180, 180]; // training, set aside, held-out
export const THRESHOLD = 0.35;
export const FIRST_MARKER = 2;
export const READING_SPREAD = 1.9;

/** Python's round(x, ndigits): the nearest decimal of `ndigits` places to x's exact value, an
 * exact tie going to the even digit.  toFixed finds the nearest decimal exactly but sends ties
 * away from zero; x is a tie when x 2**(ndigits + 1) is an odd integer. */
export function round(x, ndigits = 0) {
  if (!Number.isFinite(x)) throw new TypeError(`x must be a finite number, got ${shown(x)}`);
  integer(ndigits, "ndigits", 0, 20);
  let text = x.toFixed(ndigits);
  if (Math.abs(x * 2 ** (ndigits + 1)) % 2 === 1 && /[13579]$/.test(text)) {
    const digits = (BigInt(text.replace(/[-.]/g, "")) - 1n).toString().padStart(ndigits + 1, "0");
    const whole = digits.length - ndigits;
    text = `${x < 0 ? "-" : ""}${digits.slice(0, whole)}.${digits.slice(whole)}`;
  }
  return Number(text) || x * 0; // a zero keeps x's sign, as in Python
}

/** Part I's sequences: inputs (N, T, C), the reading and the marker flag of every step;
 * labels (N,), 1 where the marked step's reading exceeds 0.35; markers (N,), the marked step. */
export class Sequences {
  constructor(inputs, labels, markers) {
    Object.assign(this, { inputs, labels, markers, length: labels.length });
  }

  /** Sequences start .. end - 1, copied (Python's data[start:end]). */
  slice(start, end) {
    const w = STEPS * CHANNELS;
    const { inputs, labels, markers } = this;
    return new Sequences(
      inputs.slice(start * w, end * w),
      labels.slice(start, end),
      markers.slice(start, end),
    );
  }
}

/** marked_step.make_sequences: sequence i from the stream of seed + i, 35 draws each: one the
 * task never uses, three for each reading after step 0 (which is 0), the last for the marker. */
export function make_sequences(n = N_SEQUENCES, seed = DATA_SEED) {
  integer(n, "n", 1);
  check_seed(seed);
  if (BigInt(seed) + BigInt(n) > 1n << 64n) {
    throw new RangeError(`seed + n - 1 must be below 2**64, got seed ${seed} and n ${n}`);
  }
  const inputs = new Float64Array(n * STEPS * CHANNELS);
  const labels = new Int32Array(n), markers = new Int32Array(n);
  const u = new Float64Array(35);
  for (let i = 0; i < n; i++) {
    fill(BigInt(seed) + BigInt(i), 35, u);
    const x = i * STEPS * CHANNELS; // where sequence i starts
    for (let t = 1; t < STEPS; t++) {
      const raw = (u[3 * t - 2] + u[3 * t - 1] + u[3 * t] - 1.5) * READING_SPREAD;
      inputs[x + t * CHANNELS] = round(raw, 3);
    }
    const marker = FIRST_MARKER + Math.floor(u[34] * (STEPS - FIRST_MARKER));
    inputs[x + marker * CHANNELS + 1] = 1;
    markers[i] = marker;
    labels[i] = inputs[x + marker * CHANNELS] > THRESHOLD ? 1 : 0;
  }
  return new Sequences(inputs, labels, markers);
}

/** Part I's [training (the first 360), held-out (the last 180)] sequences of `data_seed`. */
export function lesson_data(data_seed = DATA_SEED) {
  const all = make_sequences(N_SEQUENCES, check_seed(data_seed, "data_seed"));
  return [all.slice(0, SPLIT[0]), all.slice(SPLIT[0] + SPLIT[1], N_SEQUENCES)];
}

// ------------------------------------------------------------ the model (single_query.py)

export const KEY_SIZE = 3; // D
export const INIT_SPREAD = 0.9;
export const NAMES = ["W_K", "W_V", "query", "readout", "bias"];
const SIZES = { W_K: 6, W_V: 6, query: 3, readout: 3, bias: 1 };

/** SingleQuery.init of one seed: 18 weights of 0.9 (u1 + u2 + u3 − 1.5) from the seed's
 * stream, in the order W_K (row by row), W_V, query, readout; the bias 0. */
export function init(seed) {
  const u = fill(check_seed(seed), 54, new Float64Array(54));
  const g = new Float64Array(18);
  for (let i = 0; i < 18; i++) g[i] = (u[3 * i] + u[3 * i + 1] + u[3 * i + 2] - 1.5) * INIT_SPREAD;
  return {
    W_K: g.slice(0, 6),
    W_V: g.slice(6, 12),
    query: g.slice(12, 15),
    readout: g.slice(15, 18),
    bias: new Float64Array(1),
  };
}

function checkParams(params) {
  if (params === null || typeof params !== "object") {
    throw new TypeError(`params must be {W_K, W_V, query, readout, bias}, got ${shown(params)}`);
  }
  const p = {};
  for (const name of NAMES) {
    const value = typeof params[name] === "number" ? [params[name]] : params[name];
    p[name] = floats(value, `params.${name}`, SIZES[name]);
  }
  return p;
}

/** `inputs` checked: finite numbers, (N, 12, 2) flattened; returns [inputs, N]. */
function checkInputs(inputs) {
  const x = floats(inputs, "inputs");
  if (x.length === 0 || x.length % (STEPS * CHANNELS) !== 0) {
    throw new RangeError(
      `inputs must have shape (N, ${STEPS}, ${CHANNELS}), flattened; got ${x.length} numbers`,
    );
  }
  return [x, x.length / (STEPS * CHANNELS)];
}

function checkLabels(labels, n) {
  const y = floats(labels, "labels", n);
  if (y.some((v) => v !== 0 && v !== 1)) throw new RangeError("labels must be 0s and 1s");
  return y;
}

/** single_query.effective: the two input-space vectors the 19 parameters act through (each
 * of C = 2), [sd, rd] = [score_direction = W_Kᵀ q / sqrt(D), readout_direction = W_Vᵀ w]. */
function effective(p) {
  const sd = new Float64Array(CHANNELS), rd = new Float64Array(CHANNELS);
  for (let c = 0; c < CHANNELS; c++) {
    for (let d = 0; d < KEY_SIZE; d++) {
      sd[c] += p.W_K[d * CHANNELS + c] * p.query[d];
      rd[c] += p.W_V[d * CHANNELS + c] * p.readout[d];
    }
    sd[c] /= Math.sqrt(KEY_SIZE);
  }
  return [sd, rd];
}

// Below, k = i T + t indexes step t of sequence i: x[2k] is its reading, x[2k + 1] its flag.

/** direction · x_t for every step of every sequence: (N, T). */
function alongSteps(x, direction) {
  const out = new Float64Array(x.length / CHANNELS);
  for (let k = 0; k < out.length; k++) {
    out[k] = x[2 * k] * direction[0] + x[2 * k + 1] * direction[1];
  }
  return out;
}

/** SingleQuery.forward of checked arguments: scores, weights (N, T), pooled (N, C), logits. */
function run(p, x, n, keep = null) {
  const [sd, rd] = effective(p);
  const scores = alongSteps(x, sd);
  const weights = softmax(scores, STEPS, keep);
  const pooled = new Float64Array(n * CHANNELS), output = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    for (let k = i * STEPS; k < (i + 1) * STEPS; k++) {
      pooled[2 * i] += weights[k] * x[2 * k]; // Σ_t weights_t x_t
      pooled[2 * i + 1] += weights[k] * x[2 * k + 1];
    }
    output[i] = pooled[2 * i] * rd[0] + pooled[2 * i + 1] * rd[1] + p.bias[0];
  }
  return { output, weights, scores, pooled, rd };
}

/** SingleQuery.forward: the network on inputs (N, T, C).  options.keep (booleans, (T,) or
 * (N, T)): the steps attention may go to, the others dropped and the weights renormalised.
 * Returns {output: logits (N,), weights (N, T), parts: {scores (N, T), pooled (N, C)}}. */
export function forward(params, inputs, options = {}) {
  const { keep = null } = checkOptions(options, ["keep"]);
  const p = checkParams(params);
  const [x, n] = checkInputs(inputs);
  if (keep !== null) {
    if (!Array.isArray(keep) || keep.some((k) => typeof k !== "boolean")) {
      throw new TypeError(`keep must be an array of booleans, got ${shown(keep)}`);
    }
    if (keep.length !== STEPS && keep.length !== n * STEPS) {
      throw new RangeError(`keep must hold ${STEPS} or ${n * STEPS} booleans, got ${keep.length}`);
    }
  }
  const { output, weights, scores, pooled } = run(p, x, n, keep);
  return { output, weights, parts: { scores, pooled } };
}

/** [the mean cross-entropy, its gradients] of checked arguments: SingleQuery.loss_and_grads,
 * each line of the gradients undoing one line of run() (and of effective()), last line first. */
function lossAndGrads(p, x, n, labels) {
  const { output, weights, pooled, rd } = run(p, x, n);
  const gradLogit = new Float64Array(n), gradRd = new Float64Array(CHANNELS);
  let gradBias = 0;
  for (let i = 0; i < n; i++) {
    gradLogit[i] = (sigmoid(output[i]) - labels[i]) / n;
    gradBias += gradLogit[i];
    gradRd[0] += gradLogit[i] * pooled[2 * i];
    gradRd[1] += gradLogit[i] * pooled[2 * i + 1];
  }
  const gradWeights = alongSteps(x, rd); // rd · x_t, times the sequence's gradLogit
  for (let k = 0; k < gradWeights.length; k++) gradWeights[k] *= gradLogit[Math.floor(k / STEPS)];
  const gradScores = softmax_backward(weights, gradWeights, STEPS);
  const gradSd = new Float64Array(CHANNELS);
  for (let k = 0; k < gradScores.length; k++) {
    gradSd[0] += gradScores[k] * x[2 * k];
    gradSd[1] += gradScores[k] * x[2 * k + 1];
  }
  const grads = { W_K: new Float64Array(6), W_V: new Float64Array(6) };
  grads.query = new Float64Array(KEY_SIZE);
  grads.readout = new Float64Array(KEY_SIZE);
  grads.bias = Float64Array.of(gradBias);
  for (let d = 0; d < KEY_SIZE; d++) {
    for (let c = 0; c < CHANNELS; c++) {
      const at = d * CHANNELS + c;
      grads.query[d] += p.W_K[at] * gradSd[c];
      grads.W_K[at] = (p.query[d] * gradSd[c]) / Math.sqrt(KEY_SIZE);
      grads.readout[d] += p.W_V[at] * gradRd[c];
      grads.W_V[at] = p.readout[d] * gradRd[c];
    }
    grads.query[d] /= Math.sqrt(KEY_SIZE);
  }
  return [binary_cross_entropy(output, labels), grads];
}

/** SingleQuery.loss_and_grads: [the mean cross-entropy, its gradients {W_K, W_V, query,
 * readout, bias}] on inputs (N, T, C) and labels (N,) of 0 and 1. */
export function loss_and_grads(params, inputs, labels) {
  const p = checkParams(params);
  const [x, n] = checkInputs(inputs);
  return lossAndGrads(p, x, n, checkLabels(labels, n));
}

/** SingleQuery.removal_effects, section 4's removal test in closed form: [p (N,), p_without
 * (N, T)], the probability of label 1, and that probability with step t dropped and the other
 * weights renormalised (the logit is linear in the weights: only the softmax is redone). */
export function removal_effects(params, inputs) {
  const p = checkParams(params);
  const [x, n] = checkInputs(inputs);
  const { output, scores, rd } = run(p, x, n);
  const perStep = alongSteps(x, rd); // readout_direction · x_t, (N, T)
  const without = new Float64Array(n * STEPS);
  for (let i = 0; i < n; i++) {
    const dropped = drop_each_step(scores.subarray(i * STEPS, (i + 1) * STEPS)); // (T, T)
    for (let t = 0; t < STEPS; t++) {
      let logit = 0;
      for (let j = 0; j < STEPS; j++) logit += dropped[t * STEPS + j] * perStep[i * STEPS + j];
      without[i * STEPS + t] = sigmoid(logit + p.bias[0]);
    }
  }
  return [output.map(sigmoid), without];
}

/** removal.effects: |p_without − p|, (N, T), for p (N,) and p_without (N, T). */
export function effects(p, p_without) {
  const a = floats(p, "p");
  const b = floats(p_without, "p_without", a.length * STEPS);
  return b.map((v, k) => Math.abs(v - a[Math.floor(k / STEPS)]));
}

// ------------------------------------------------------------ training (marked_step_runs.py)

export const EPOCHS = 200;
export const LEARNING_RATE = 0.6;
export const MAX_EPOCHS = 100_000; // training.MAX_EPOCHS

function checkOptions(options, known) {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new TypeError(`options must be an object of {${known}}, got ${shown(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw new TypeError(`unknown option ${key}: the options are ${known}`);
    }
  }
  return options;
}

let cached = null; // [data_seed, its training sequences], read only

/** marked_step_runs.train: one network from init seed `seed`, trained by `epochs` steps of
 * full-batch gradient descent, θ ← θ − η g, on the training sequences of `data_seed`.
 * Returns {params, curve}: the trained parameters and the loss before each step (epochs,). */
export function train(seed, options = {}) {
  checkOptions(options, ["data_seed", "epochs", "learning_rate"]);
  const { data_seed = DATA_SEED, epochs = EPOCHS, learning_rate = LEARNING_RATE } = options;
  const params = init(seed);
  integer(epochs, "epochs", 1, MAX_EPOCHS);
  positive(learning_rate, "learning_rate");
  if (cached?.[0] !== data_seed) cached = [data_seed, lesson_data(data_seed)[0]]; // checks it
  const { inputs, labels } = cached[1];
  const curve = new Float64Array(epochs);
  for (let e = 0; e < epochs; e++) {
    const [loss, grads] = lossAndGrads(params, inputs, labels.length, labels);
    if (!Number.isFinite(loss)) {
      const why = `learning_rate ${learning_rate} is too large`;
      throw new RangeError(`the loss became ${loss} at step ${e}: ${why}`);
    }
    curve[e] = loss;
    for (const name of NAMES) {
      for (let i = 0; i < SIZES[name]; i++) params[name][i] -= learning_rate * grads[name][i];
    }
  }
  return { params, curve };
}

// ------------------------------------------------------------ measures (markers.py)

function checkData(data) {
  if (!(data instanceof Sequences)) {
    throw new TypeError(`data must be Sequences (from make_sequences), got ${shown(data)}`);
  }
  return data;
}

/** markers.accuracy: the share of sequences whose logit has the label's sign. */
export function accuracy(params, data) {
  const { output } = forward(params, checkData(data).inputs);
  return output.filter((z, i) => z > 0 === (data.labels[i] === 1)).length / data.length;
}

/** markers.marker_weight: [the mean weight on the marked step, the share of sequences whose
 * heaviest step is the marked one]. */
export function marker_weight(params, data) {
  const { weights } = forward(params, checkData(data).inputs);
  let total = 0, hits = 0;
  data.markers.forEach((m, i) => {
    total += weights[i * STEPS + m];
    if (argmax(weights, i * STEPS, STEPS) === m) hits++;
  });
  return [total / data.length, hits / data.length];
}

/** The seed explorer's numbers (marked_step_explorers.seed_report, without the comparison
 * with the hundred seeds): the network trained from `seed`, its curve, and on the held-out set
 * its accuracy, marker weight and hit rate; on held-out sequence `example_index`, the weights
 * and removal effects of its steps (each (T,)) and its marked step. */
export function seed_report(seed, example_index = 0) {
  check_seed(seed);
  integer(example_index, "example_index", 0, SPLIT[2] - 1);
  const { params, curve } = train(seed);
  const heldout = lesson_data()[1];
  const chosen = heldout.slice(example_index, example_index + 1);
  const [weight, hit] = marker_weight(params, heldout);
  return {
    seed,
    params,
    curve,
    heldout_accuracy: accuracy(params, heldout),
    marker_weight: weight,
    marker_hit_rate: hit,
    weights: forward(params, chosen.inputs).weights,
    effects: effects(...removal_effects(params, chosen.inputs)),
    marker: chosen.markers[0],
  };
}
