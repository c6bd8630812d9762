// Part II's self-attention (chapters/taxonomy/05-self-attention, "A worked example, number by
// number") in JavaScript: one sequence, one head and no output projection, so that a page can
// redo the worked example with the reader's numbers.  Twin of core/attention.py:
//
//   causal_mask(steps)                       attention.causal_mask
//   self_attention(X, W_Q, W_K, W_V, n, …)   attention.multi_head_attention(X, X, W_Q, W_K,
//                                            W_V, identity, heads=1, mask), with its Q, K, V
//                                            and scores, and the division by √d optional
//
// Arrays are flat Float64Arrays in numpy's row-major layout (see core.mjs): X (n, d_model),
// W_Q and W_K (d_model, d), W_V (d_model, dv); a mask is (n, n) of booleans or 0 and 1, true
// where query i may attend key j.  The sums run in plain order where numpy's matrix products
// may not, and exp is V8's: the results are held to |js − python| <= 1e-12 max(1, |python|)
// by tests/js/self_attention.test.mjs.  Every function refuses bad input with an Error naming
// the argument (TypeError for the wrong kind, RangeError for a value out of range).

import { floats, integer, shown, softmax } from "./core.mjs";

/** attention.causal_mask: (steps, steps), 1 where query i may attend key j, that is j <= i. */
export function causal_mask(steps) {
  integer(steps, "steps", 1);
  const mask = new Uint8Array(steps * steps);
  for (let i = 0; i < steps; i++) mask.fill(1, i * steps, i * steps + i + 1);
  return mask;
}

/** a (rows, inner) times b (inner, cols), each sum in plain order. */
function matmul(a, b, rows, inner, cols) {
  const out = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      let total = 0;
      for (let k = 0; k < inner; k++) total += a[i * inner + k] * b[k * cols + j];
      out[i * cols + j] = total;
    }
  }
  return out;
}

/** `value` as a Float64Array of finite numbers that fill a whole number (at least one) of
 * rows of `width`, or an Error naming `name` and saying it must be `what`. */
function matrix(value, name, width, what) {
  const out = floats(value, name);
  if (out.length === 0 || out.length % width !== 0) {
    throw new RangeError(`${name} must be ${what}, a whole number of rows of ${width}, ` +
      `got ${out.length} numbers`);
  }
  return out;
}

/** A mask for n steps: null, or (n, n) booleans or 0 and 1, as a Uint8Array. */
function checkMask(mask, n) {
  if (mask === null) return null;
  if (!(Array.isArray(mask) || (ArrayBuffer.isView(mask) && !(mask instanceof DataView)))) {
    throw new TypeError(`mask must be null or an array of (n, n) booleans, got ${shown(mask)}`);
  }
  if (mask.length !== n * n) {
    throw new RangeError(`mask must hold n * n = ${n * n} entries, got ${mask.length}`);
  }
  const out = new Uint8Array(n * n);
  for (let i = 0; i < mask.length; i++) {
    const entry = mask[i];
    if (!(entry === true || entry === false || entry === 0 || entry === 1)) {
      throw new TypeError(`mask must hold booleans (or 0 and 1), got ${shown(entry)} at ${i}`);
    }
    out[i] = entry ? 1 : 0;
  }
  return out;
}

/** Self-attention of one sequence X (n, d_model), as the worked example computes it:
 *
 *   Q = X W_Q, K = X W_K, V = X W_V,
 *   scores = Q Kᵀ / √d (without the division when options.scale is false),
 *   weights = softmax of each row of the scores over the keys its mask row allows,
 *   output = weights V.
 *
 * options: {scale = true, mask = null}.  A row whose mask allows no key gets weights of zero,
 * and so an output of zero, as the library's softmax gives.  Returns {n, d_model, d, dv, Q,
 * K (n, d), V (n, dv), scores (n, n), weights (n, n), output (n, dv)}.  Numbers so large that
 * a score is not finite are refused (the page allows entries up to 1e6 in size, whose scores
 * stay below 1e27). */
export function self_attention(X, W_Q, W_K, W_V, n, options = {}) {
  integer(n, "n", 1);
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new TypeError(`options must be an object of {scale, mask}, got ${shown(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (key !== "scale" && key !== "mask") {
      throw new TypeError(`unknown option ${key}: the options are scale, mask`);
    }
  }
  const { scale = true, mask = null } = options;
  if (typeof scale !== "boolean") {
    throw new TypeError(`scale must be true or false, got ${shown(scale)}`);
  }
  const x = matrix(X, "X", n, "(n, d_model)");
  const d_model = x.length / n;
  const wq = matrix(W_Q, "W_Q", d_model, "(d_model, d)");
  const d = wq.length / d_model;
  const wk = floats(W_K, "W_K", d_model * d);
  const wv = matrix(W_V, "W_V", d_model, "(d_model, dv)");
  const dv = wv.length / d_model;
  const keep = checkMask(mask, n);

  const Q = matmul(x, wq, n, d_model, d);
  const K = matmul(x, wk, n, d_model, d);
  const V = matmul(x, wv, n, d_model, dv);
  const scores = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      let total = 0;
      for (let k = 0; k < d; k++) total += Q[i * d + k] * K[j * d + k];
      // a division by √d, as the library divides (not a multiplication by 1 / √d)
      scores[i * n + j] = scale ? total / Math.sqrt(d) : total;
    }
  }
  for (const [name, values] of [["Q", Q], ["K", K], ["V", V], ["scores", scores]]) {
    if (!values.every(Number.isFinite)) {
      throw new RangeError(`the numbers are too large: ${name} is not finite`);
    }
  }
  const weights = softmax(scores, n, keep);
  const output = matmul(weights, V, n, n, dv);
  return { n, d_model, d, dv, Q, K, V, scores, weights, output };
}

/** The rows (queries) of an (n, n) mask that allow no key: their weights are all zero. */
export function empty_rows(mask, n) {
  const keep = checkMask(mask, integer(n, "n", 1));
  const rows = [];
  if (keep === null) return rows;
  for (let i = 0; i < n; i++) if (!keep.subarray(i * n, (i + 1) * n).some((k) => k)) rows.push(i);
  return rows;
}
