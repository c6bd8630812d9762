// Part I's seed explorer in the page (lib/attention_measured/book/js/lesson_page.mjs): what it
// accepts as a seed, and where it places a seed among the hundred. The browser tests
// (tests/browser/test_pages.py) compare what it prints with the library's describe_seed.
import assert from "node:assert/strict";
import { test } from "node:test";

import { parseSeed, shareBelow } from "../../lib/attention_measured/book/js/lesson_page.mjs";

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
