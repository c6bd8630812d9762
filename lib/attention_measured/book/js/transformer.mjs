// Part IV's Transformer translating in the reader's page: the encoder, and the decoder one word
// at a time with its key-value cache.  Twin of models/transformer.py (Transformer.encode,
// decoder_start, decoder_next, the layers of encoder_layer and decoder_layer, layer_norm) and of
// attention.sinusoidal_positions, in the same names: parameters are a {name: Float64Array}
// under torch's state-dict names ("encoder.layers.0.self_attn.in_proj_weight", …), each flat in
// numpy's row-major layout, and a layer's weight (out, in) is applied as x Wᵀ + b.
//
// One sentence at a time: a sentence of m words is a matrix (m, E) of rows.  Post-norm and
// pre-norm layers, any number of layers and heads, with or without positions; no dropout and
// no padding (a typed sentence has none).  The model's decoder follows the protocol of
// decoding.mjs: start(source) and next(state, word, t).  Sums run in plain order, so results
// are held to |js − python| <= 1e-9 · max(1, |python|) by tests/js/translators.test.mjs.
import { integer, linear, shown, softmax, token_ids } from "./core.mjs";

export const EPS = 1e-5; // transformer.EPS, torch's LayerNorm default

/** attention.sinusoidal_positions: (steps, size), sin on even columns and cos on odd ones,
 * column pair (2i, 2i + 1) turning at the frequency 1 / 10000^(2i / size); from row `first` on
 * only (steps − first, size), when given (a decoder's newest position). */
export function sinusoidal_positions(steps, size, first = 0) {
  integer(steps, "steps", 1);
  integer(size, "size", 2);
  integer(first, "first", 0, steps - 1);
  if (size % 2) throw new RangeError(`size must be even (sin and cos in pairs), got ${size}`);
  const out = new Float64Array((steps - first) * size);
  for (let t = first; t < steps; t++) {
    for (let c = 0; c < size; c += 2) {
      const angle = t / 10000.0 ** (c / size);
      out[(t - first) * size + c] = Math.sin(angle);
      out[(t - first) * size + c + 1] = Math.cos(angle);
    }
  }
  return out;
}

/** transformer.layer_norm of each of `rows` rows of x (rows, D): (x − mean) / sqrt(var + eps) ·
 * weight + bias, the variance the biased one. */
export function layer_norm(x, rows, D, weight, bias, eps = EPS) {
  const out = new Float64Array(rows * D);
  for (let r = 0; r < rows; r++) {
    let mean = 0;
    for (let c = 0; c < D; c++) mean += x[r * D + c];
    mean /= D;
    let variance = 0;
    for (let c = 0; c < D; c++) variance += (x[r * D + c] - mean) ** 2;
    const inv = 1.0 / Math.sqrt(variance / D + eps);
    for (let c = 0; c < D; c++) {
      out[r * D + c] = (x[r * D + c] - mean) * inv * weight[c] + bias[c];
    }
  }
  return out;
}

/** torch's nn.MultiheadAttention for `n` queries (n, E) asking `m` keys and values (each (m, E),
 * already projected): each head h reads its block of E / heads columns, with weights
 * softmax(q kᵀ / sqrt(dh)) (where `causal`, query i reads keys 0 … offset + i only).  Returns
 * {out (n, E) before the output projection, weights (heads, n, m)}. */
function heads_attend(q, k, v, n, m, E, heads, causal = false, offset = 0) {
  const dh = E / heads;
  const out = new Float64Array(n * E);
  const weights = new Float64Array(heads * n * m);
  const scores = new Float64Array(n * m);
  const keep = causal ? new Uint8Array(n * m) : null;
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < m; j++) {
        let s = 0;
        for (let c = h * dh; c < (h + 1) * dh; c++) s += q[i * E + c] * k[j * E + c];
        scores[i * m + j] = s / Math.sqrt(dh);
        if (keep) keep[i * m + j] = j <= offset + i ? 1 : 0;
      }
    }
    const w = softmax(scores, m, keep);
    weights.set(w, h * n * m);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < m; j++) {
        const a = w[i * m + j];
        for (let c = h * dh; c < (h + 1) * dh; c++) out[i * E + c] += a * v[j * E + c];
      }
    }
  }
  return { out, weights };
}

/** The query, key and value projections of ``prefix`` (torch's in_proj: rows [W_Q; W_K; W_V])
 * as three (E, E) weights and their biases. */
function projections(p, prefix, E) {
  const W = p[`${prefix}in_proj_weight`], b = p[`${prefix}in_proj_bias`];
  const part = (i) => [W.subarray(i * E * E, (i + 1) * E * E), b.subarray(i * E, (i + 1) * E)];
  return { q: part(0), k: part(1), v: part(2) };
}

/** A Transformer's configuration as the page carries it: {width, heads, feed_forward, layers,
 * norm_first, positions, bos, source_vocabulary, target_vocabulary}, checked. */
function checkConfig(config) {
  if (config === null || typeof config !== "object") {
    throw new TypeError(`config must be the Transformer's sizes, got ${shown(config)}`);
  }
  for (const name of ["width", "heads", "feed_forward", "layers", "source_vocabulary",
    "target_vocabulary"]) {
    integer(config[name], `config.${name}`, 1);
  }
  if (config.width % config.heads || config.width % 2) {
    throw new RangeError(`config.width ${config.width} must be even and split into ` +
      `${config.heads} heads`);
  }
  return config;
}

/** A trained Transformer (`config`, `params`) as decoding.mjs reads a model: {bos, start, next}.
 *
 * start(source): the encoder reads the source ids (m,) into its memory (m, E); the state also
 * holds each decoder layer's cross-attention keys and values, projected once, and an empty
 * key-value cache.  next(state, word, t): the previous word's id at position t (the words
 * decoded so far) gives {logits (V,), weights (m,) the last layer's cross-attention averaged
 * over the heads, state}: a new state whose cache holds one position more; the state passed in
 * is left as it was. */
export function transformer(config, params) {
  const { width: E, heads, feed_forward: F, layers, norm_first: first } = checkConfig(config);
  const p = params;
  const V = config.target_vocabulary;
  const layer = (side, i, name) => p[`${side}.layers.${i}.${name}`];

  const embed = (table, ids, start) => {
    const x = new Float64Array(ids.length * E);
    const positions = config.positions ? sinusoidal_positions(start + ids.length, E, start)
      : null;
    ids.forEach((id, i) => {
      for (let c = 0; c < E; c++) {
        x[i * E + c] = p[table][id * E + c] + (positions ? positions[i * E + c] : 0);
      }
    });
    return x;
  };
  const norm = (prefix, x, rows) => layer_norm(x, rows, E, p[`${prefix}.weight`],
    p[`${prefix}.bias`]);
  const feedForward = (prefix, x, rows) => {
    const hidden = linear(x, rows, p[`${prefix}linear1.weight`], p[`${prefix}linear1.bias`], E, F);
    for (let i = 0; i < hidden.length; i++) hidden[i] = Math.max(hidden[i], 0.0);
    return linear(hidden, rows, p[`${prefix}linear2.weight`], p[`${prefix}linear2.bias`], F, E);
  };
  const outProjection = (prefix, out, rows) => linear(out, rows, p[`${prefix}out_proj.weight`],
    p[`${prefix}out_proj.bias`], E, E);
  /** One sublayer with its residual: post-norm LN(x + f(x)), pre-norm x + f(LN(x)). */
  const residual = (normName, x, rows, inner) => {
    if (first) {
      const out = inner(norm(normName, x, rows));
      return out.map((value, i) => x[i] + value);
    }
    const out = inner(x);
    return norm(normName, out.map((value, i) => x[i] + value), rows);
  };

  function start(source) {
    const m = token_ids(source, "source", config.source_vocabulary).length;
    let x = embed("source_embedding", source, 0);
    for (let i = 0; i < layers; i++) {
      const prefix = `encoder.layers.${i}.`;
      const proj = projections(p, `${prefix}self_attn.`, E);
      x = residual(`${prefix}norm1`, x, m, (z) => {
        const [q, k, v] = ["q", "k", "v"].map((w) => linear(z, m, proj[w][0], proj[w][1], E, E));
        return outProjection(`${prefix}self_attn.`, heads_attend(q, k, v, m, m, E, heads).out, m);
      });
      x = residual(`${prefix}norm2`, x, m, (z) => feedForward(prefix, z, m));
    }
    const memory = norm("encoder.norm", x, m);
    const cross = [];
    for (let i = 0; i < layers; i++) {
      const proj = projections(p, `decoder.layers.${i}.multihead_attn.`, E);
      cross.push({ k: linear(memory, m, ...proj.k, E, E), v: linear(memory, m, ...proj.v, E, E) });
    }
    return { memory, m, cross, kv: Array.from({ length: layers }, () => ({ k: [], v: [] })) };
  }

  function next(state, word, t) {
    if (!state || !Array.isArray(state.kv)) {
      throw new TypeError(`state must be the Transformer's start() or next() state, got ` +
        `${shown(state)}`);
    }
    integer(word, "word", 0, V - 1);
    if (t !== state.kv[0].k.length) {
      throw new RangeError(`t must be the number of words decoded so far, ` +
        `${state.kv[0].k.length}; got ${t}`);
    }
    const { m } = state;
    let x = embed("target_embedding", [word], t);
    const kv = [];
    let crossWeights = null;
    for (let i = 0; i < layers; i++) {
      const prefix = `decoder.layers.${i}.`;
      const self = projections(p, `${prefix}self_attn.`, E);
      const cache = { k: state.kv[i].k, v: state.kv[i].v };
      x = residual(`${prefix}norm1`, x, 1, (z) => {
        const q = linear(z, 1, ...self.q, E, E);
        cache.k = [...cache.k, linear(z, 1, ...self.k, E, E)];
        cache.v = [...cache.v, linear(z, 1, ...self.v, E, E)];
        const n = cache.k.length;
        const keys = new Float64Array(n * E), values = new Float64Array(n * E);
        cache.k.forEach((row, j) => keys.set(row, j * E));
        cache.v.forEach((row, j) => values.set(row, j * E));
        return outProjection(`${prefix}self_attn.`, heads_attend(q, keys, values, 1, n, E,
          heads).out, 1);
      });
      kv.push(cache);
      const cross = projections(p, `${prefix}multihead_attn.`, E);
      x = residual(`${prefix}norm2`, x, 1, (z) => {
        const q = linear(z, 1, ...cross.q, E, E);
        const { out, weights } = heads_attend(q, state.cross[i].k, state.cross[i].v, 1, m, E,
          heads);
        crossWeights = weights;
        return outProjection(`${prefix}multihead_attn.`, out, 1);
      });
      x = residual(`${prefix}norm3`, x, 1, (z) => feedForward(prefix, z, 1));
    }
    const out = norm("decoder.norm", x, 1);
    const logits = linear(out, 1, p["out.weight"], p["out.bias"], E, V);
    const weights = new Float64Array(m); // the last layer's, averaged over the heads
    for (let h = 0; h < heads; h++) {
      for (let j = 0; j < m; j++) weights[j] += crossWeights[h * m + j];
    }
    for (let j = 0; j < m; j++) weights[j] /= heads;
    return { logits, weights, state: { ...state, kv } };
  }

  return { bos: config.bos, start, next };
}
