// Part IV's translators in JavaScript (lib/attention_measured/book/js: transformer.mjs,
// recurrent.mjs, decoding.mjs, translation.mjs and the page's translation_page.mjs) against the
// Python library, on translators.json (from tools/js_fixtures.py): the Transformer and
// Bahdanau's translator read back from the page's own data translate 108 test sentences word
// for word as translation_runs.translation_of does on the same weights, greedy and by beam
// search, with the log-probability, the weights where each word looked and those given the
// true previous words within |js − python| <= 1e-9 · max(1, |python|), and the same measures;
// two untrained Transformers of other shapes do too; and the grammar translates or refuses
// chosen texts with the library's words and messages.
import assert from "node:assert/strict";
import { test } from "node:test";

import { along, beam_search, greedy } from "../../lib/attention_measured/book/js/decoding.mjs";
import { gru_cell } from "../../lib/attention_measured/book/js/recurrent.mjs";
import {
  language, translate, words_of,
} from "../../lib/attention_measured/book/js/translation.mjs";
import {
  measures, reading, refusalMessage, translation_of, unpackModel,
} from "../../lib/attention_measured/book/js/translation_page.mjs";
import { layer_norm, sinusoidal_positions } from "../../lib/attention_measured/book/js/transformer.mjs";
import { fixture } from "./fixtures.mjs";

const TOLERANCE = 1e-9;

/** The largest |got − want| over two flat lists, after asserting each within the tolerance. */
function close(got, want, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  let largest = 0;
  got.forEach((value, i) => {
    const diff = Math.abs(value - want[i]);
    assert.ok(diff <= TOLERANCE * Math.max(1, Math.abs(want[i])),
      `${what}[${i}] is ${value}, the library's ${want[i]}`);
    largest = Math.max(largest, diff);
  });
  return largest;
}

const flat = (rows) => rows.flatMap((row) => [...row]);

function models() {
  const { page, models: cases } = fixture("translators.json");
  const lang = language(page.lexicon, page.specials);
  const carried = { ...page.models };
  for (const [name, c] of Object.entries(cases)) carried[name] ??= c.carried;
  return { lang, page, cases, made: Object.fromEntries(Object.entries(carried).map(
    ([name, c]) => [name, unpackModel(c)])) };
}

test("the page carries the library's two translators, seed 0, in single precision", () => {
  const { page, models: cases } = fixture("translators.json");
  assert.deepEqual(Object.keys(page.models), ["Transformer", "Bahdanau"]);
  for (const name of Object.keys(page.models)) {
    assert.deepEqual(page.models[name], cases[name].carried, name);
  }
  assert.equal(page.models.Transformer.config.kind, "Transformer");
  assert.equal(page.models.Bahdanau.config.kind, "Bahdanau");
});

test("each translator translates every test sentence as the library does", (t) => {
  const { lang, cases, made } = models();
  for (const [name, list] of Object.entries(cases)) {
    const trained = name === "Transformer" || name === "Bahdanau";
    assert.equal(list.cases.length, trained ? 108 : 10, name);
    let largest = 0, translations = 0;
    for (const c of list.cases) {
      for (const [beam, want] of Object.entries(c.beams)) {
        const what = `${name}, beam ${beam}: ${c.source.join(" ")}`;
        const r = translation_of(made[name], lang, c.source, Number(beam));
        assert.deepEqual(r.output, want.output, `${what}: the words`);
        assert.deepEqual(r.reference, c.reference, `${what}: the grammar's`);
        assert.deepEqual(r.alignment, c.alignment, `${what}: the alignment`);
        assert.deepEqual(r.forced_words, c.forced_words, `${what}: given the true words`);
        largest = Math.max(largest, close([r.log_prob], [want.log_prob], `${what}: log_prob`),
          close(flat(r.weights), want.weights, `${what}: weights`),
          close(flat(r.forced), c.forced, `${what}: forced`));
        assert.deepEqual(measures(r), want.measures, `${what}: measures`);
        translations++;
      }
    }
    t.diagnostic(`${name}: ${translations} translations, largest |js - python| ` +
      `${largest.toExponential(1)}`);
  }
});

test("a wider beam never scores lower than greedy decoding, and beam 1 is greedy", () => {
  const { lang, cases, made } = models();
  for (const c of cases.Transformer.cases.slice(0, 20)) {
    const source = c.source.map((w) => lang.source.indexOf(w));
    const plain = beam_search(made.Transformer, source, 1);
    const wide = beam_search(made.Transformer, source, 5);
    assert.ok(wide.log_prob >= plain.log_prob, c.source.join(" "));
    const { ids } = greedy(made.Transformer, source);
    const end = ids.indexOf(2);
    assert.deepEqual(plain.ids.slice(0, end + 1), ids.slice(0, end + 1));
    // the decoder fed its own greedy words gives greedy decoding's weights again
    const again = along(made.Transformer, source, [1, ...ids.slice(0, -1)]);
    close(flat(again.weights), flat(greedy(made.Transformer, source).weights), "along");
  }
});

test("the grammar translates or refuses each text as the library does", () => {
  const { grammar } = fixture("translators.json");
  const { lang } = models();
  assert.ok(grammar.length >= 25);
  for (const c of grammar) {
    assert.deepEqual(words_of(c.text), c.words, c.text);
    const pair = translate(c.words, lang);
    if ("error" in c) {
      assert.ok(pair instanceof Error, `${c.text}: refused`);
      assert.equal(pair.message, c.error, c.text);
      const said = refusalMessage(pair, c.words, lang);
      assert.ok(said.length > 20 && !said.includes("translation.LEXICON"), said);
    } else {
      assert.deepEqual(pair, { source: c.source, target: c.target, alignment: c.alignment });
    }
  }
});

test("the page's wording names the word the grammar stops at", () => {
  const { lang } = models();
  const say = (text) => refusalMessage(translate(words_of(text), lang), words_of(text), lang);
  assert.match(say("the cat sees a unicorn"), /Not words of the language: “cat”, “unicorn”/);
  assert.match(say("the dog a bird"), /word 3 \(“a”\): here the clause's verb should come/);
  assert.match(say("the dog sees"), /The sentence ends where a noun phrase should start/);
  assert.match(say("the dog sees a bird the fox"), /word 6 \(“the”\): .* only “and”/);
  assert.match(say(""), /Type a sentence/);
});

test("what the page shows: bold words, rows, rings while the output is right", () => {
  const r = {
    source: ["the", "dog", "sees", "a", "red", "bird"],
    reference: ["lo", "kani", "na", "ava", "ruda", "vidas"],
    alignment: [0, 1, 3, 5, 4, 2],
    output: ["lo", "kani", "na", "ruda", "vidas"],
    log_prob: -1.234,
    weights: Array.from({ length: 7 }, (_, i) => Float64Array.from({ length: 6 },
      (_, j) => (j === [0, 1, 3, 5, 4, 2, 2][i] ? 1 : 0))),
    forced: Array.from({ length: 7 }, () => new Float64Array(6).fill(1 / 6)),
    forced_words: ["lo", "kani", "na", "ava", "ruda", "vidas", "</s>"],
  };
  const greedyReading = reading(r, "greedy");
  assert.deepEqual(greedyReading.rows, ["lo", "kani", "na", "ruda", "vidas", "</s>"]);
  assert.deepEqual(greedyReading.words.map(([, right]) => right),
    [true, true, true, false, false]);
  assert.deepEqual(greedyReading.rings, [[0, 0], [1, 1], [2, 3]]);
  assert.match(greedyReading.summary,
    /^exact: no; 3 of 6 words right, position by position; ends 1 word early; /);
  assert.match(greedyReading.summary, /log-probability -1\.23; .* 3 of the 3 circled rows$/);
  const cut = reading({ ...r, output: [...r.reference, "lo"] }, "greedy");
  assert.match(cut.summary, /; stopped after 7 words without <\/s>, at the step limit;/);
  const forcedReading = reading(r, "forced");
  assert.equal(forcedReading.rows.length, 7);
  assert.equal(forcedReading.rings.length, 6);
  assert.match(forcedReading.summary, /^7 of 7 words guessed right \(the 6 words and <\/s>, /);
});

test("the layers' pieces: positions, layer norm, the GRU cell", () => {
  const pe = sinusoidal_positions(3, 4);
  close(pe, [0, 1, 0, 1, Math.sin(1), Math.cos(1), Math.sin(0.01), Math.cos(0.01),
    Math.sin(2), Math.cos(2), Math.sin(0.02), Math.cos(0.02)], "positions");
  const y = layer_norm([1, 2, 3, 4], 1, 4, [1, 1, 1, 1], [0, 0, 0, 0], 0);
  close(y, [-3, -1, 1, 3].map((v) => v / Math.sqrt(5)), "layer_norm");
  // a GRU cell with all weights zero: r = z = 1/2, n = 0, so h' = h / 2
  const zero = { weight_ih: new Float64Array(12), weight_hh: new Float64Array(12),
    bias_ih: new Float64Array(6), bias_hh: new Float64Array(6) };
  close(gru_cell(zero, [1, 2], [4, -2]), [2, -1], "gru_cell");
  assert.throws(() => gru_cell(zero, [1, 2, 3], [4, -2]), /params must be a GRU cell's/);
  assert.throws(() => sinusoidal_positions(3, 5), /size must be even/);
});

test("the translators refuse what they cannot read, naming it", () => {
  const { made, page } = models();
  assert.throws(() => made.Transformer.start([]), /source must be one or more word ids/);
  assert.throws(() => made.Bahdanau.start([99]), /source must be one or more word ids/);
  const state = made.Transformer.start([3, 20, 30]);
  assert.throws(() => made.Transformer.next(state, 1, 2), /t must be the number of words/);
  assert.throws(() => made.Transformer.next(state, 77, 0), /word must be an integer/);
  assert.throws(() => beam_search(made.Transformer, [3, 20, 30], 0), /beam must be/);
  assert.throws(() => beam_search(made.Transformer, [3, 20, 30], 65), /beam must be/);
  assert.throws(() => unpackModel({ ...page.models.Bahdanau, weights: "AAAAAA==" }),
    /the carried weights hold 1 numbers/);
  assert.throws(() => unpackModel({ ...page.models.Bahdanau,
    config: { ...page.models.Bahdanau.config, kind: "Luong" } }), /config.kind must be/);
});
