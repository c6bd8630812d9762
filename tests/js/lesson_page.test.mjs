// Part I's explorers in the page (lib/attention_measured/book/js/lesson_page.mjs): what the seed
// explorer accepts as a seed and where it places a seed among the hundred; what the drop-a-step
// explorer accepts, and its numbers and description for every held-out example and step against
// the library's (drop.json, from tools/js_fixtures.py), the numbers within 1e-12 (V8's exp may
// differ from numpy's in the last bit) and the text exactly. The browser tests
// (tests/browser/test_pages.py) compare what the pages print with describe_seed and describe_drop.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  describeDrop,
  dropReport,
  parseIndex,
  parseSeed,
  shareBelow,
} from "../../lib/attention_measured/book/js/lesson_page.mjs";
import { fixture } from "./fixtures.mjs";

const TOLERANCE = 1e-12;

test("a seed is any whole number from 0 to 2**64 - 1, as a Number where it is exact", () => {
  assert.equal(parseSeed(" 12345 "), 12345);
  assert.equal(parseSeed("0"), 0);
  assert.equal(parseSeed(String(Number.MAX_SAFE_INTEGER)), Number.MAX_SAFE_INTEGER);
  assert.equal(parseSeed("9007199254740993"), 9007199254740993n);
  assert.equal(parseSeed("18446744073709551615"), 2n ** 64n - 1n);
});

test("anything else is an Error that says what a seed is", () => {
  for (const [text, says] of [
    ["", "Type a seed"],
    ["-1", "is not a seed"],
    ["1.5", "is not a seed"],
    ["1e3", "is not a seed"],
    ["seven", "is not a seed"],
    ["18446744073709551616", "too large"],
  ]) {
    const result = parseSeed(text);
    assert.ok(result instanceof Error, text);
    assert.match(result.message, new RegExp(says));
    assert.match(result.message, /whole number from 0 to 2\^64/);
  }
});

test("a seed is placed by the share of the hundred below it, a seed of the hundred by its sweep value", () => {
  const hundred = { seeds: [10, 11, 12, 13], weights: [0.2, 0.4, 0.6, 0.8] };
  assert.equal(shareBelow(99, 0.5, hundred), 0.5);
  assert.equal(shareBelow(99, 0.1, hundred), 0);
  assert.equal(shareBelow(99, 0.9, hundred), 1);
  // seed 12 is compared by its own value in the sweep, whatever it trained to here
  assert.equal(shareBelow(12, 0.61, hundred), 0.5);
  assert.equal(shareBelow(12n, 0.61, hundred), 0.5);
});

test("an index is a whole number below the count; anything else says what it must be", () => {
  assert.equal(parseIndex(" 179 ", "held-out example", 180), 179);
  assert.equal(parseIndex("0", "step", 12), 0);
  for (const [text, says] of [
    ["", "Type a step"],
    ["-1", "is not a step"],
    ["2.0", "is not a step"],
    ["eleven", "is not a step"],
    ["12", "12 is too large"],
    ["99999999999999999999999", "too large"],
  ]) {
    const result = parseIndex(text, "step", 12);
    assert.ok(result instanceof Error, text);
    assert.match(result.message, new RegExp(says));
    assert.match(result.message, /a step is a whole number from 0 to 11\.$/);
  }
});

test("dropping any step of any held-out example gives the library's numbers and text", (t) => {
  const { runs, cases } = fixture("drop.json");
  assert.equal(cases.length, 180 * 12);
  let largest = 0;
  for (const c of cases) {
    const got = dropReport(runs, c.example, c.step);
    const what = `example ${c.example}, step ${c.step}`;
    assert.equal(got.marker, c.marker, `${what}: marker`);
    const pairs = [
      [got.weights.flatMap((w) => Array.from(w)), c.weights, "weights"],
      [got.without.flatMap((w) => Array.from(w)), c.without, "without"],
      [got.p, c.p, "p"],
      [got.p_without, c.p_without, "p_without"],
    ];
    for (const [actual, expected, name] of pairs) {
      assert.equal(actual.length, expected.length, `${what}: ${name}'s length`);
      actual.forEach((value, i) => {
        const diff = Math.abs(value - expected[i]);
        assert.ok(diff <= TOLERANCE * Math.max(1, Math.abs(expected[i])),
          `${what}: ${name}[${i}] is ${value}, the library's ${expected[i]}`);
        largest = Math.max(largest, diff);
      });
    }
    assert.equal(describeDrop(got, c.example, c.step), c.text, what);
  }
  t.diagnostic(`largest |js - python| ${largest.toExponential(1)}`);
});

test("the drop report refuses an example or a step out of range, naming it", () => {
  const { runs } = fixture("drop.json");
  assert.throws(() => dropReport(runs, 180, 0), /example must be an integer between 0 and 179/);
  assert.throws(() => dropReport(runs, 0, 12), /step must be an integer between 0 and 11/);
  assert.throws(() => dropReport(runs, 0.5, 0), /example must be an integer/);
  assert.throws(() => dropReport([runs[0]], 0, 0), /runs must be the two runs/);
});
