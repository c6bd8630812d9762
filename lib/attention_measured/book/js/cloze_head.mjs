// Part II's self-attention head on the sentences of the Universal Declaration (chapters/udhr) in
// JavaScript: the tokens, and the trained head's forward pass on one sentence, for each of its
// three kinds of query, so that a page can read any sentence the reader types.  Twin of
//
//   tasks/cloze.py          tokenize, encode (the vocabulary check and its message)
//   models/cloze_head.py    forward (one sentence), attention_weights, predict
//
// Parameters are {E (V, d), W_Q, W_K, W_V (d, d), W_O (d, V)} and, for the blank query
// ("mask" in the library) mask_embedding (d,), for the position query positions (MAX_LEN, d):
// flat Float64Arrays in numpy's row-major layout (see core.mjs).  The head never lets a token
// attend to itself.  Sums run in plain order and exp is V8's, so results are held to
// |js − python| <= 1e-9 max(1, |python|) by tests/js/cloze_head.test.mjs.
import { floats, quoted, shown } from "./core.mjs";

export const WIDTH = 24; // d
export const NAMES = ["E", "W_Q", "W_K", "W_V", "W_O"];

/** cloze.tokenize: the runs of letters a to z in the lowercased text. */
export function tokenize(text) {
  if (typeof text !== "string") throw new TypeError(`text must be a string, got ${shown(text)}`);
  return text.toLowerCase().match(/[a-z]+/g) ?? [];
}

/** cloze.encode with the head's `vocabulary` (V words, in the library's order): the ids of the
 * tokens of `text`, or an Error that names the words the head does not know, or says why the
 * sentence is too short or too long (`longest` tokens at most). */
export function encode(text, vocabulary, longest) {
  const tokens = tokenize(text);
  const unknown = [...new Set(tokens.filter((t) => !vocabulary.includes(t)))];
  if (unknown.length) {
    return new Error(`Not in the head's vocabulary: ${quoted(unknown)}. It knows only the ` +
      `${vocabulary.length} words of its sixteen sentences (listed below the box).`);
  }
  if (tokens.length < 2) {
    return new Error(`The head needs at least two words: a word may not attend to itself, so ` +
      `${tokens.length ? "a single word would have nothing" : "there would be nothing"} to read.`);
  }
  if (tokens.length > longest) {
    return new Error(`${tokens.length} words are too many: the head reads at most ${longest} ` +
      `(its longest sentence; the position query knows no later position).`);
  }
  return tokens.map((t) => vocabulary.indexOf(t));
}

/** Which kind of query `params` belong to, as cloze_head.query_kind says. */
export function query_kind(params) {
  if ("mask_embedding" in params) return "mask";
  return "positions" in params ? "position" : "token";
}

/** (rows, inner) @ (inner, cols), flat. */
function product(a, b, rows, inner, cols) {
  const out = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    for (let k = 0; k < inner; k++) {
      const x = a[i * inner + k];
      for (let j = 0; j < cols; j++) out[i * cols + j] += x * b[k * cols + j];
    }
  }
  return out;
}

/** Softmax of each row of (rows, m), skipping the diagonal when `noSelf` (weight exactly 0). */
function rowSoftmax(scores, rows, m, noSelf) {
  const out = new Float64Array(rows * m);
  for (let i = 0; i < rows; i++) {
    let top = -Infinity;
    for (let j = 0; j < m; j++) if (!(noSelf && i === j)) top = Math.max(top, scores[i * m + j]);
    let total = 0;
    for (let j = 0; j < m; j++) {
      const e = noSelf && i === j ? 0 : Math.exp(scores[i * m + j] - top);
      out[i * m + j] = e;
      total += e;
    }
    for (let j = 0; j < m; j++) out[i * m + j] /= total;
  }
  return out;
}

/** Head.forward on one sentence of token `ids` (n,), n ≥ 2: {weights (n, n), probs (n, V)}:
 * Q = (X, m or P[:n]) W_Q, K = X W_K, V = X W_V, A = softmax(Q Kᵀ / √d) over the other tokens,
 * probs = softmax(A V W_O). */
export function forward(params, ids) {
  if (params === null || typeof params !== "object") {
    throw new TypeError(`params must be the head's arrays {${NAMES}}, got ${shown(params)}`);
  }
  const d = WIDTH;
  const V = params.E.length / d;
  const p = {};
  for (const name of NAMES) {
    const size = { E: V * d, W_O: d * V }[name] ?? d * d;
    p[name] = floats(params[name], `params.${name}`, size);
  }
  const kind = query_kind(params);
  const n = ids.length;
  if (!Array.isArray(ids) || n < 2 || ids.some((t) => !Number.isInteger(t) || t < 0 || t >= V)) {
    throw new RangeError(`ids must be two or more token ids from 0 to ${V - 1}, got ${shown(ids)}`);
  }
  const x = new Float64Array(n * d);
  ids.forEach((t, i) => x.set(p.E.subarray(t * d, (t + 1) * d), i * d));
  let queryInputs = x;
  if (kind === "mask") {
    const m = floats(params.mask_embedding, "params.mask_embedding", d);
    queryInputs = new Float64Array(n * d);
    for (let i = 0; i < n; i++) queryInputs.set(m, i * d);
  } else if (kind === "position") {
    const positions = floats(params.positions, "params.positions");
    if (n * d > positions.length) {
      throw new RangeError(`the position query knows ${positions.length / d} positions, got ` +
        `a sentence of ${n} tokens`);
    }
    queryInputs = positions.subarray(0, n * d);
  }
  const q = product(queryInputs, p.W_Q, n, d, d);
  const k = product(x, p.W_K, n, d, d);
  const v = product(x, p.W_V, n, d, d);
  const scores = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let c = 0; c < d; c++) s += q[i * d + c] * k[j * d + c];
      scores[i * n + j] = s / Math.sqrt(d);
    }
  }
  const weights = rowSoftmax(scores, n, n, true);
  const read = product(weights, v, n, n, d);
  const probs = rowSoftmax(product(read, p.W_O, n, d, V), n, V, false);
  return { weights, probs };
}
