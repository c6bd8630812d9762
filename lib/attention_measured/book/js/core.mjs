// The numeric core of the book's models in JavaScript (checks, the softmax, rows of numbers,
// the weights a page carries), which every other module here imports; written first for Part
// I's network (lesson.mjs), so that a page can train it in the reader's browser from any seed,
// and described below as that network uses it.  The translators of Part IV read it one
// sentence at a time (the section "rows of numbers").
//
// Twin of the Python library (lib/attention_measured): the same names, defaults and shapes.
// Arrays are flat Float64Arrays in numpy's row-major layout: inputs (N, T, C) = (N, 12, 2),
// weights and scores (N, T), W_K and W_V (3, 2); parameters are {W_K, W_V, query, readout,
// bias}, the bias a Float64Array of one number.  One network at a time: the library's stacks of
// networks trained side by side, and the forward pass's `weights` and `scale` changes (Part VI),
// are not twinned.  Seeds are integers in [0, 2**64): Numbers below 2**53, BigInts above.  Every
// public function refuses bad input with an Error naming the argument (TypeError for the wrong
// kind, RangeError for a value out of range).
//
// How close to Python.  The random draws, the data and the initial parameters are the
// library's to the last bit.  Everything after them passes through Math.exp, whose last bit
// differs from numpy's exp for some arguments, and through sums added here in plain order where
// numpy adds pairwise; so trained parameters, losses, accuracies, weights and removal effects
// are held to |js - python| <= 1e-9 max(1, |python|); they agree to a few 1e-15 (the tests
// print the largest differences).  Exact reproduction is out of reach anyway: V8's Math.exp and
// numpy's exp differ in the last bit for about one argument in ten.
//
//   .venv/bin/python tools/js_fixtures.py _build/js-fixtures   # the library's numbers
//   node --test tests/js/              # the twin against them (ATTENTION_JS_FIXTURES=another dir)
//   node bench/bench_js.mjs            # how long train(seed) takes
//
// Both files are plain ES modules without dependencies, which the book hands to a page inline
// (book/live.py), rewriting the one specifier "./core.mjs" of lesson.mjs's one import statement.
// So lesson.mjs imports from this file only named bindings, in the static form `import { a, b }
// from` that specifier; no `import * as`, no dynamic import(); and this file imports nothing.

export const MAX_COUNT = 1_000_000; // checks.MAX_COUNT: the most of anything a count may ask for
export const LOGIT_CLIP = 30.0; // losses.LOGIT_CLIP

// ---------------------------------------------------------------- checks (core/checks.py)

/** A short description of a value for an error message. */
export function shown(value) {
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "string") return JSON.stringify(value);
  if (value === null || typeof value !== "object") return String(value);
  return value.constructor?.name ?? "object";
}

/** `value` as an integer Number in [low, high], or an Error naming `name`.  A count (no `high`)
 * is at most MAX_COUNT, as in the library. */
export function integer(value, name, low = 0, high = MAX_COUNT) {
  if (!Number.isInteger(value)) {
    throw new TypeError(`${name} must be an integer, got ${shown(value)}`);
  }
  if (value < low || value > high) {
    throw new RangeError(`${name} must be an integer between ${low} and ${high}, got ${value}`);
  }
  return value;
}

/** Words for a message: the first `most` of `words`, each in quotes and cut after 20 letters,
 * then "and N more" for the rest (the live pages' lists of words they do not know). */
export function quoted(words, most = 8) {
  const cut = (w) => (w.length > 20 ? `${w.slice(0, 20)}…` : w);
  const listed = words.slice(0, most).map((w) => `“${cut(w)}”`).join(", ");
  return listed + (words.length > most ? ` and ${words.length - most} more` : "");
}

/** `value` if it is an array of one or more word ids from 0 to size − 1 (checks.token_ids for
 * one sentence), or an Error naming `name`. */
export function token_ids(value, name, size) {
  if (!Array.isArray(value) || value.length < 1 || value.some((id) => !Number.isInteger(id) ||
    id < 0 || id >= size)) {
    throw new RangeError(`${name} must be one or more word ids from 0 to ${size - 1}, got ` +
      `${shown(value)}`);
  }
  return value;
}

/** `value` as a finite positive Number, or an Error naming `name`. */
export function positive(value, name) {
  if (typeof value !== "number") {
    throw new TypeError(`${name} must be a number, got ${shown(value)}`);
  }
  if (!(Number.isFinite(value) && value > 0)) {
    throw new RangeError(`${name} must be a finite positive number, got ${value}`);
  }
  return value;
}

/** A seed in [0, 2**64): a Number (exact only below 2**53, so larger Numbers are refused) or a
 * BigInt.  Returns it unchanged, or throws an Error naming `name`. */
export function seed(value, name = "seed") {
  if (typeof value === "bigint") {
    if (value < 0n || value >= 1n << 64n) {
      throw new RangeError(`${name} must be between 0 and 2**64 - 1, got ${value}n`);
    }
    return value;
  }
  if (!Number.isInteger(value)) {
    const got = shown(value);
    throw new TypeError(`${name} must be a non-negative integer (Number or BigInt), got ${got}`);
  }
  if (value < 0 || !Number.isSafeInteger(value)) {
    throw new RangeError(
      `${name} must be a Number in [0, 2**53) (a BigInt for larger seeds), got ${value}`,
    );
  }
  return value;
}

/** `value` (a typed array or an array of numbers) as a Float64Array of finite numbers, of
 * `length` numbers when given; or an Error naming `name`. */
export function floats(value, name, length = null) {
  if (!(Array.isArray(value) || (ArrayBuffer.isView(value) && !(value instanceof DataView)))) {
    const got = shown(value);
    throw new TypeError(`${name} must be a Float64Array or an array of numbers, got ${got}`);
  }
  if (length !== null && value.length !== length) {
    throw new RangeError(`${name} must hold ${length} numbers, got ${value.length}`);
  }
  for (let i = 0; i < value.length; i++) {
    if (typeof value[i] !== "number") {
      throw new TypeError(`${name} must hold numbers, got ${shown(value[i])} at ${i}`);
    }
    if (!Number.isFinite(value[i])) {
      throw new RangeError(`${name} must hold finite numbers, got ${value[i]} at ${i}`);
    }
  }
  return value instanceof Float64Array ? value : Float64Array.from(value);
}

// ---------------------------------------------------------------- losses (core/losses.py)

/** losses.sigmoid: 1 / (1 + exp(-logit)), the logit clipped to ±30. */
export function sigmoid(logit) {
  return 1.0 / (1.0 + Math.exp(-Math.min(Math.max(logit, -LOGIT_CLIP), LOGIT_CLIP)));
}

/** np.logaddexp(0, z) = log(1 + e^z), computed stably as numpy does. */
export function softplus(z) {
  return Math.max(z, 0) + Math.log1p(Math.exp(-Math.abs(z)));
}

/** losses.binary_cross_entropy: the mean of log(1 + e^z) − y z over the logits z (N,). */
export function binary_cross_entropy(logit, labels) {
  let total = 0;
  for (let i = 0; i < logit.length; i++) total += softplus(logit[i]) - labels[i] * logit[i];
  return total / logit.length;
}

// ---------------------------------------------------------------- softmax (core/attention.py)

/** attention.softmax over the last axis of scores (rows, m), where `keep` allows: keep is
 * null (every step), or 0/1 or booleans of length m (the same steps in every row) or rows * m.
 * A step not kept gets exactly 0; a row with no step kept is all zeros.  Returns (rows, m).
 * (Finite scores only: the library's sharing of weight among +inf scores is not twinned.) */
export function softmax(scores, m, keep = null) {
  const weights = new Float64Array(scores.length);
  for (let row = 0; row < scores.length; row += m) {
    const k = keep && keep.length === m ? 0 : row; // where this row's keep starts
    let top = -Infinity;
    for (let j = 0; j < m; j++) if (!keep || keep[k + j]) top = Math.max(top, scores[row + j]);
    let total = 0;
    for (let j = 0; j < m; j++) {
      const e = !keep || keep[k + j] ? Math.exp(scores[row + j] - top) : 0;
      weights[row + j] = e;
      total += e;
    }
    // a row with a kept step sums to at least exp(0) = 1; one without sums to 0 and stays 0
    for (let j = 0; j < m; j++) weights[row + j] /= Math.max(total, 1);
  }
  return weights;
}

/** attention.softmax_backward over the last axis of (rows, m): the gradient of the scores,
 * w_j (g_j − Σ_i w_i g_i), from the weights w and the gradient g of the weights. */
export function softmax_backward(weights, grad, m) {
  const out = new Float64Array(weights.length);
  for (let row = 0; row < weights.length; row += m) {
    let inner = 0;
    for (let j = row; j < row + m; j++) inner += weights[j] * grad[j];
    for (let j = row; j < row + m; j++) out[j] = (grad[j] - inner) * weights[j];
  }
  return out;
}

/** attention.drop_each_step of one row of m scores: (m, m), row t the softmax over every step
 * but t (recomputed, not renormalised, which loses precision when w_t is near one). */
export function drop_each_step(scores) {
  const m = scores.length;
  const rows = new Float64Array(m * m), keep = new Uint8Array(m * m);
  for (let t = 0; t < m; t++) {
    rows.set(scores, t * m);
    for (let j = 0; j < m; j++) keep[t * m + j] = t === j ? 0 : 1;
  }
  return softmax(rows, m, keep);
}

/** attention.online_softmax of one query, step by step: its `scores` (m,), -Infinity where a key
 * is masked, and the keys' `values` (m, dv), read `block` keys at a time.  Returns one state per
 * block, {start, stop, top, total, acc (dv,), rescale}: the largest score so far, the sum of
 * exp(score − top) and of exp(score − top) · value over the keys read, and the factor
 * exp(old top − new top) this block multiplied the past by; the last acc / total is
 * softmax(scores) · values.  A query with no allowed key so far keeps top = −inf, total 0. */
export function online_softmax(scores, values, dv, block) {
  if (!(scores instanceof Float64Array || Array.isArray(scores)) || scores.length === 0) {
    throw new TypeError(`scores must be a non-empty array of numbers, got ${shown(scores)}`);
  }
  for (const s of scores) {
    if (typeof s !== "number" || Number.isNaN(s) || s === Infinity) {
      throw new RangeError(`scores must be finite numbers or -Infinity (masked), got ${s}`);
    }
  }
  const m = scores.length;
  integer(dv, "dv", 1);
  const v = floats(values, "values", m * dv);
  integer(block, "block", 1);
  const steps = [];
  let top = -Infinity, total = 0, acc = new Float64Array(dv);
  for (let start = 0; start < m; start += block) {
    const stop = Math.min(start + block, m);
    let newTop = top;
    for (let j = start; j < stop; j++) newTop = Math.max(newTop, scores[j]);
    const shift = newTop === -Infinity ? 0 : newTop; // no allowed key yet: shift by 0
    const rescale = Math.exp(top - shift); // 0 on the first allowed block
    let sum = 0;
    const weighted = new Float64Array(dv); // this block's sum of exp(score − shift) · value
    for (let j = start; j < stop; j++) {
      const e = Math.exp(scores[j] - shift); // a masked key: exp(-inf) = 0
      sum += e;
      for (let c = 0; c < dv; c++) weighted[c] += e * v[j * dv + c];
    }
    [top, total, acc] = [newTop, total * rescale + sum, acc.map((a, c) => a * rescale + weighted[c])];
    steps.push({ start, stop, top, total, acc: Float64Array.from(acc), rescale });
  }
  return steps;
}

/** np.argmax of a[start .. start + m): the first largest. */
export function argmax(a, start, m) {
  let best = 0;
  for (let j = 1; j < m; j++) if (a[start + j] > a[start + best]) best = j;
  return best;
}

// ---------------------------------------------------------------- rows of numbers (Part IV)
// The translators (transformer.mjs, recurrent.mjs) read one sentence at a time: a matrix is a
// flat Float64Array of rows, and a layer's weight is torch's (out, in), applied as x Wᵀ + b.

/** x Wᵀ + b for `rows` rows of x (rows, inner), W (outer, inner) and b (outer,) or null:
 * torch's nn.Linear on each row, (rows, outer).  `x` may be longer: its first rows are read. */
export function linear(x, rows, W, b, inner, outer) {
  const out = new Float64Array(rows * outer);
  for (let r = 0; r < rows; r++) {
    for (let o = 0; o < outer; o++) {
      let s = b ? b[o] : 0;
      for (let k = 0; k < inner; k++) s += x[r * inner + k] * W[o * inner + k];
      out[r * outer + o] = s;
    }
  }
  return out;
}

/** log softmax of the numbers a[start .. start + m), computed stably as losses.log_softmax:
 * (a − max) − log Σ exp(a − max).  Returns (m,). */
export function log_softmax(a, start = 0, m = a.length - start) {
  let top = -Infinity;
  for (let j = 0; j < m; j++) top = Math.max(top, a[start + j]);
  let total = 0;
  for (let j = 0; j < m; j++) total += Math.exp(a[start + j] - top);
  const log = Math.log(total);
  const out = new Float64Array(m);
  for (let j = 0; j < m; j++) out[j] = a[start + j] - top - log;
  return out;
}

/** From base64 text of little-endian float32 numbers: a Float64Array (the weights a page carries, book/live.py). */
export function fromBase64(text) {
  const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  return Float64Array.from(new Float32Array(bytes.buffer));
}
