// Part IV's recurrent translator with Bahdanau's attention, translating in the reader's page.
// Twin of models/recurrent.py (gru_cell, and EncoderDecoder of kind "Bahdanau": encode,
// decoder_start, decoder_next) and of the additive score of models/flavours.py, in the same
// names: parameters are a {name: Float64Array} under the library's names (torch's for the GRUs:
// "encoder.weight_ih_l0", "encoder.weight_ih_l0_reverse", "decoder.weight_ih", …; the additive
// score's "add_W", "add_U", "add_v"), each flat in numpy's row-major layout.
//
// One sentence at a time.  The encoder is a bidirectional GRU: annotations h_j = [→h_j; ←h_j]
// (m, 2H), and the decoder's first state s_0 = tanh(W_init ←h_1 + b).  At each step the previous
// state s asks: e_j = v · tanh(W s + U h_j), weights a = softmax(e), context c = Σ_j a_j h_j;
// the GRU reads [the previous word's embedding; c], and the logits read [s'; c].  The other
// kinds of EncoderDecoder (the fixed context, Luong's) are not twinned.  The model follows the
// protocol of decoding.mjs.  Held to |js − python| <= 1e-9 · max(1, |python|) by
// tests/js/translators.test.mjs.
import { integer, linear, shown, sigmoid, softmax, token_ids } from "./core.mjs";

/** recurrent.gru_cell for one row: the next state (H,) of a GRU cell reading x (I,) from the
 * state h (H,), with `params` {weight_ih (3H, I), weight_hh (3H, H), bias_ih, bias_hh (3H,)},
 * gates in torch's order reset, update, new:
 *   r = σ(W_ir x + b_ir + W_hr h + b_hr),  z = σ(W_iz x + b_iz + W_hz h + b_hz),
 *   n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn)),  h' = (1 − z) ⊙ n + z ⊙ h. */
export function gru_cell(params, x, h) {
  const H = h.length, I = x.length;
  if (params.weight_hh?.length !== 3 * H * H || params.weight_ih?.length !== 3 * H * I) {
    throw new RangeError(`params must be a GRU cell's weights for x (${I},) and h (${H},)`);
  }
  const fromX = linear(x, 1, params.weight_ih, params.bias_ih, I, 3 * H);
  const fromH = linear(h, 1, params.weight_hh, params.bias_hh, H, 3 * H);
  const out = new Float64Array(H);
  for (let c = 0; c < H; c++) {
    const r = sigmoid(fromX[c] + fromH[c]);
    const z = sigmoid(fromX[H + c] + fromH[H + c]);
    const n = Math.tanh(fromX[2 * H + c] + r * fromH[2 * H + c]);
    out[c] = (1 - z) * n + z * h[c];
  }
  return out;
}

/** The four arrays of one GRU, stored under the names of a torch module. */
function gru(p, names) {
  const [weight_ih, weight_hh, bias_ih, bias_hh] = names.map((name) => p[name]);
  return { weight_ih, weight_hh, bias_ih, bias_hh };
}

const ENCODER = ["encoder.weight_ih_l0", "encoder.weight_hh_l0", "encoder.bias_ih_l0",
  "encoder.bias_hh_l0"];
const REVERSE = ENCODER.map((name) => `${name}_reverse`);
const DECODER = ["decoder.weight_ih", "decoder.weight_hh", "decoder.bias_ih", "decoder.bias_hh"];

/** A trained Bahdanau translator (`config` {kind: "Bahdanau", embedding, hidden, units, bos,
 * source_vocabulary, target_vocabulary}, `params`) as decoding.mjs reads a model: {bos, start,
 * next}.  start(source): the annotations h (m, 2H) of the source ids (m,) and s_0.
 * next(state, word, t): {logits (V,), weights (m,), state}; `t` is unused (a recurrent decoder
 * keeps its place in its state). */
export function bahdanau(config, params) {
  if (config?.kind !== "Bahdanau") {
    throw new RangeError(`config.kind must be "Bahdanau" (the one recurrent kind twinned), ` +
      `got ${shown(config?.kind)}`);
  }
  for (const name of ["embedding", "hidden", "units", "source_vocabulary", "target_vocabulary"]) {
    integer(config[name], `config.${name}`, 1);
  }
  const { embedding: E, hidden: H, units: A, target_vocabulary: V } = config;
  const D = 2 * H; // the annotations: both directions
  const p = params;

  const row = (table, id, width) => p[table].subarray(id * width, (id + 1) * width);

  function start(source) {
    const m = token_ids(source, "source", config.source_vocabulary).length;
    const x = source.map((id) => row("source_embedding", id, E));
    const h = new Float64Array(m * D);
    let state = new Float64Array(H);
    for (let j = 0; j < m; j++) {
      state = gru_cell(gru(p, ENCODER), x[j], state);
      h.set(state, j * D);
    }
    state = new Float64Array(H);
    for (let j = m - 1; j >= 0; j--) {
      state = gru_cell(gru(p, REVERSE), x[j], state);
      h.set(state, j * D + H);
    }
    // s_0 = tanh(W_init ←h_1 + b): the backward direction's state at the first word
    const s = linear(h.subarray(H, D), 1, p["init.weight"], p["init.bias"], H, H).map(Math.tanh);
    const fromKeys = linear(h, m, p.add_U, null, D, A); // U h_j, (m, A), the same every step
    return { h, m, s, fromKeys };
  }

  function next(state, word, t = 0) {
    if (!state || !(state.h instanceof Float64Array)) {
      throw new TypeError(`state must be the translator's start() or next() state, got ` +
        `${shown(state)}`);
    }
    integer(word, "word", 0, V - 1);
    integer(t, "t", 0);
    const { h, m, s, fromKeys } = state;
    const fromQuery = linear(s, 1, p.add_W, null, H, A);
    const scores = new Float64Array(m);
    for (let j = 0; j < m; j++) {
      let e = 0;
      for (let a = 0; a < A; a++) e += Math.tanh(fromQuery[a] + fromKeys[j * A + a]) * p.add_v[a];
      scores[j] = e;
    }
    const weights = softmax(scores, m);
    const context = new Float64Array(D);
    for (let j = 0; j < m; j++) {
      for (let d = 0; d < D; d++) context[d] += weights[j] * h[j * D + d];
    }
    const input = new Float64Array(E + D);
    input.set(row("target_embedding", word, E));
    input.set(context, E);
    const next = gru_cell(gru(p, DECODER), input, s);
    const features = new Float64Array(H + D);
    features.set(next);
    features.set(context, H);
    const logits = linear(features, 1, p["out.weight"], p["out.bias"], H + D, V);
    return { logits, weights, state: { ...state, s: next } };
  }

  return { bos: config.bos, start, next };
}
