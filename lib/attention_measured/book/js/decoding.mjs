// Reading a translation out of a translator in the reader's page: greedy decoding, beam search,
// and the decoder fed the true previous words.  Twin of models/decoding.py (beam_search and
// greedy, for one sentence) and of the translators' greedy() and teacher-forced weights.
//
// A model is what transformer.mjs and recurrent.mjs make: {bos, start(source) -> state,
// next(state, word, t) -> {logits (V,), weights (m,), state}}, next leaving the state it is given
// as it was, so that a beam may extend one prefix several ways.
//
// Beam search keeps the `beam` most likely prefixes, scored by their log-probability; a prefix
// that has written </s> is finished and keeps its score; ties go to the prefix the library's
// stable sort puts first.  As in the library, a beam wider than one returns greedy decoding's
// sentence where that scores higher, and scores are not divided by length.
import { argmax, integer, log_softmax, shown } from "./core.mjs";

export const MAX_BEAM = 64; // decoding.MAX_BEAM
export const EOS = 2; // the id of </s> in both vocabularies (translation.SPECIALS)

function checkModel(model) {
  for (const name of ["start", "next"]) {
    if (typeof model?.[name] !== "function") {
      throw new TypeError(`model must offer start and next (transformer.mjs, recurrent.mjs), ` +
        `lacks ${name}: got ${shown(model)}`);
    }
  }
  return model;
}

/** decoding.beam_search for one sentence: {ids (steps,), log_prob, length}: the ids read up to
 * and including the first </s> and padded after it with </s>, the model's log-probability of
 * them, and the words up to and including the first </s> (steps when there is none).  `beam`
 * 1 is greedy decoding; `steps` defaults to the source length + 1. */
export function beam_search(model, source, beam, eos = EOS, steps = null) {
  checkModel(model);
  integer(beam, "beam", 1, MAX_BEAM);
  steps = steps === null ? source.length + 1 : integer(steps, "steps", 1);
  let states = Array(beam).fill(model.start(source));
  let words = Array(beam).fill(model.bos);
  let scores = Array.from({ length: beam }, (_, b) => (b === 0 ? 0.0 : -Infinity));
  let done = Array(beam).fill(false);
  let history = Array.from({ length: beam }, () => []);
  for (let t = 0; t < steps; t++) {
    const stepped = states.map((state, b) => model.next(state, words[b], t));
    const V = stepped[0].logits.length;
    if (eos >= V) throw new RangeError(`eos must be a word of the vocabulary, below ${V}`);
    const total = new Float64Array(beam * V);
    stepped.forEach(({ logits }, b) => {
      // a finished prefix is extended only by </s>, at no cost, so it keeps its score
      const logp = done[b] ? Float64Array.from({ length: V }, (_, w) => (w === eos ? 0 : -Infinity))
        : log_softmax(logits);
      for (let w = 0; w < V; w++) total[b * V + w] = scores[b] + logp[w];
    });
    const order = Array.from(total.keys()).sort((a, b) =>
      total[a] > total[b] ? -1 : total[a] < total[b] ? 1 : a - b);
    const best = order.slice(0, beam);
    const origin = best.map((k) => Math.floor(k / V));
    words = best.map((k) => k % V);
    scores = best.map((k) => total[k]);
    history = origin.map((o, b) => [...history[o], words[b]]);
    done = origin.map((o, b) => done[o] || words[b] === eos);
    states = origin.map((o) => stepped[o].state);
    if (done.every(Boolean)) break;
  }
  const pick = argmax(scores, 0, beam); // the first of equals
  const ids = [...history[pick]];
  while (ids.length < steps) ids.push(eos);
  const end = ids.indexOf(eos);
  const out = { ids, log_prob: scores[pick], length: end < 0 ? steps : end + 1 };
  if (beam === 1) return out;
  const plain = beam_search(model, source, 1, eos, steps);
  return plain.log_prob > out.log_prob ? plain : out;
}

/** The model fed `previous` words (the start-of-sentence id, then each word it is to read) one
 * at a time: {logits (n, V), weights (n, m)}, row i what the model gives after reading
 * previous[0 .. i].  Under teacher forcing, previous is the true translation shifted right. */
export function along(model, source, previous) {
  checkModel(model);
  let state = model.start(source);
  const logits = [], weights = [];
  previous.forEach((word, t) => {
    const out = model.next(state, word, t);
    logits.push(out.logits);
    weights.push(out.weights);
    state = out.state;
  });
  return { logits, weights };
}

/** The translators' greedy(): each step feeds back its own most likely word, for `steps` steps
 * (default the source length + 1), past </s> too.  {ids (steps,), weights (steps, m)}. */
export function greedy(model, source, steps = null) {
  checkModel(model);
  steps = steps === null ? source.length + 1 : integer(steps, "steps", 1);
  let state = model.start(source);
  let word = model.bos;
  const ids = [], weights = [];
  for (let t = 0; t < steps; t++) {
    const out = model.next(state, word, t);
    word = argmax(out.logits, 0, out.logits.length);
    ids.push(word);
    weights.push(out.weights);
    state = out.state;
  }
  return { ids, weights };
}
