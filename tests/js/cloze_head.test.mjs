// Part II's heads in JavaScript (lib/attention_measured/book/js/cloze_head.mjs and the page glue
// cloze_page.mjs) against the Python library, on cloze.json (from tools/js_fixtures.py): the
// three heads as the page carries them, read back from the page's own data; their weights and
// probabilities on the 16 corpus sentences and 20 random ones, within
// |js − python| <= 1e-9 · max(1, |python|) and with the same top prediction; and the tokens
// and the vocabulary check on chosen texts.
import assert from "node:assert/strict";
import { test } from "node:test";

import { encode, forward, tokenize } from "../../lib/attention_measured/book/js/cloze_head.mjs";
import { describeReading, unpackHeads } from "../../lib/attention_measured/book/js/cloze_page.mjs";
import { argmax } from "../../lib/attention_measured/book/js/core.mjs";
import { named } from "../../lib/attention_measured/book/js/heatmap.mjs";
import { fixture } from "./fixtures.mjs";

const TOLERANCE = 1e-9;

test("each head reads every sentence as the library does", (t) => {
  const { page, cases } = fixture("cloze.json");
  const heads = unpackHeads(page.heads, page.vocabulary, page.longest);
  const V = page.vocabulary.length;
  for (const [name, list] of Object.entries(cases)) {
    assert.equal(list.length, 36, name);
    let largest = 0;
    for (const c of list) {
      const { weights, probs } = forward(heads[name], c.ids);
      const what = `${name}: ${c.tokens.join(" ")}`;
      for (const [got, want, quantity] of [[weights, c.weights, "weights"], [probs, c.probs, "probs"]]) {
        assert.equal(got.length, want.length, `${what}: ${quantity}'s length`);
        got.forEach((value, i) => {
          const diff = Math.abs(value - want[i]);
          assert.ok(diff <= TOLERANCE * Math.max(1, Math.abs(want[i])),
            `${what}: ${quantity}[${i}] is ${value}, the library's ${want[i]}`);
          largest = Math.max(largest, diff);
        });
      }
      c.tokens.forEach((_, i) => {
        assert.equal(argmax(probs, i * V, V), argmax(c.probs, i * V, V), `${what}: word ${i}`);
      });
    }
    t.diagnostic(`${name} query: largest |js - python| ${largest.toExponential(1)}`);
  }
});

test("tokens and the vocabulary check are the library's", () => {
  const { page, texts } = fixture("cloze.json");
  for (const c of texts) {
    assert.deepEqual(tokenize(c.text), c.tokens, c.text);
    const ids = encode(c.text, page.vocabulary, page.longest);
    if ("ids" in c && c.ids.length <= page.longest) {
      assert.deepEqual(ids, c.ids, c.text);
    } else if ("ids" in c) {
      assert.match(ids.message, new RegExp(`${c.ids.length} words are too many.*at most 19`));
    } else if (c.error.startsWith("not in the vocabulary")) {
      // the same words named, in the same order
      const named = [...c.error.split(".")[0].matchAll(/'([a-z]+)'/g)].map((m) => m[1]);
      const said = [...ids.message.matchAll(/“([a-z]+)”/g)].map((m) => m[1]);
      assert.deepEqual(said, named.slice(0, 8), c.text);
    } else {
      assert.match(ids.message, /at least two words/, c.text);
    }
  }
});

test("the description names each word's prediction and counts the right ones", () => {
  const tokens = ["all", "free"];
  const vocabulary = ["all", "born", "free"];
  const weights = [0, 1, 1, 0];
  const probs = [0.1, 0.2, 0.7, 0.1, 0.1, 0.8];
  const { summary, rows } = describeReading(tokens, weights, probs, vocabulary, "token");
  assert.equal(summary, "token query: 1 of 2 tokens predicted correctly");
  assert.deepEqual(rows, [
    ["all", "free", "0.100", "free (1.00)"],
    ["free", "free", "0.800", "all (1.00)"],
  ]);
});

test("forward refuses ids it cannot read, naming them", () => {
  const { page } = fixture("cloze.json");
  const heads = unpackHeads(page.heads, page.vocabulary, page.longest);
  assert.throws(() => forward(heads.token, [3]), /ids must be two or more token ids/);
  assert.throws(() => forward(heads.token, [3, 98]), /ids must be two or more token ids from 0 to 97/);
  assert.throws(() => forward(heads.position, Array(20).fill(3)), /knows 19 positions/);
  assert.throws(() => forward(null, [1, 2]), /params must be/);
  const long = encode(`a ${"b".repeat(300)}`, page.vocabulary, page.longest);
  assert.match(long.message, /“b{20}…”/); // a long unknown word is cut in the message
});

test("a live map's tip names a word said twice by its position too", () => {
  const words = ["all", "and", "free", "and"];
  assert.equal(named(words, 0), "“all”");
  assert.equal(named(words, 1), "“and” (position 1)");
  assert.equal(named(words, 3), "“and” (position 3)");
});
