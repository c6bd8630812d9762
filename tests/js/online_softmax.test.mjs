// The online softmax in JavaScript (core.mjs's online_softmax) against the library's
// attention.online_softmax, block by block, on the cases of online_softmax.json (from
// tools/js_fixtures.py), within |js − python| <= 1e-12 · max(1, |python|); and what the stepper
// on the costs page (online_softmax_page.mjs) accepts in its boxes and says at the end.
import assert from "node:assert/strict";
import { test } from "node:test";

import { online_softmax } from "../../lib/attention_measured/book/js/core.mjs";
import {
  describeResult,
  MOST_KEYS,
  parseInputs,
  parseRow,
  short,
} from "../../lib/attention_measured/book/js/online_softmax_page.mjs";
import { fixture } from "./fixtures.mjs";

const TOLERANCE = 1e-12;
const number = (x) => (typeof x === "string" ? Number(x.replace("inf", "Infinity")) : x);

function close(actual, expected, what) {
  const diff = Math.abs(actual - expected);
  if (Object.is(actual, expected)) return 0;
  assert.ok(diff <= TOLERANCE * Math.max(1, Math.abs(expected)),
    `${what}: got ${actual}, the library has ${expected}`);
  return diff;
}

test("every block's running state is the library's, and the last gives the softmax", (t) => {
  const { cases } = fixture("online_softmax.json");
  assert.equal(cases.length, 200);
  let largest = 0, rescaled = 0, masked = 0;
  cases.forEach((c, i) => {
    const scores = c.scores.map(number);
    const steps = online_softmax(scores, c.values, c.dv, c.block);
    assert.equal(steps.length, c.steps.length, `case ${i}: blocks`);
    steps.forEach((step, b) => {
      const want = c.steps[b];
      assert.equal(step.top, number(want.top), `case ${i}, block ${b}: the maximum`);
      largest = Math.max(largest, close(step.total, want.total, `case ${i}, block ${b}: l`));
      step.acc.forEach((a, k) => {
        largest = Math.max(largest, close(a, want.acc[k], `case ${i}, block ${b}: o[${k}]`));
      });
      if (b > 0 && step.rescale > 0 && step.rescale < 1) rescaled++;
    });
    const last = steps[steps.length - 1];
    if (last.total === 0) masked++;
    c.plain.forEach((want, k) => {
      const got = last.total > 0 ? last.acc[k] / last.total : 0;
      largest = Math.max(largest, close(got, want, `case ${i}: o / l [${k}]`));
    });
  });
  assert.ok(rescaled > 50, `only ${rescaled} blocks rescaled the past`);
  assert.ok(masked >= 4, `only ${masked} cases with every key masked`);
  t.diagnostic(`largest |js - python| ${largest.toExponential(1)}; ${rescaled} rescalings`);
});

test("online_softmax refuses bad input, naming the argument", () => {
  assert.throws(() => online_softmax([], [], 1, 1), /scores must be a non-empty array/);
  assert.throws(() => online_softmax([1, NaN], [1, 2], 1, 1), /scores must be finite/);
  assert.throws(() => online_softmax([1, Infinity], [1, 2], 1, 1), /scores must be finite/);
  assert.throws(() => online_softmax([1, 2], [1], 1, 1), /values/);
  assert.throws(() => online_softmax([1, 2], [1, 2], 1, 0), /block must be an integer/);
  assert.throws(() => online_softmax([1, 2], [1, 2], 0, 1), /dv must be an integer/);
});

test("the boxes take numbers and -inf, and say what is wrong with anything else", () => {
  assert.deepEqual(parseRow("1, -2.5  3e1", "values"), [1, -2.5, 30]);
  assert.deepEqual(parseRow("−1 -inf −∞", "scores", true), [-1, -Infinity, -Infinity]);
  for (const [text, says] of [
    ["", /Type the values/],
    ["1 two", /“two” is not a number/],
    ["1 -inf", /“-inf” is not a number/],
    ["1e999", /1e999 is too large/],
    ["1000001", /1000001 is too large/],
    [Array(MOST_KEYS + 1).fill("1").join(" "), /17 are too many/],
  ]) {
    const result = parseRow(text, "values");
    assert.ok(result instanceof Error, text);
    assert.match(result.message, says);
  }
  assert.deepEqual(parseRow("-1000000 1000000", "values"), [-1e6, 1e6]);
  const counts = parseInputs("1 2", "1", "1");
  assert.match(counts.message, /2 scores and 1 values/);
  assert.equal(counts.box, "values"); // the box the page marks as wrong
  assert.equal(parseInputs("1 x", "1 2", "1").box, "scores");
  assert.match(parseInputs("1 2", "1 2", "17").message, /block is a whole number of keys from 1 to 16/);
  assert.equal(parseInputs("1 2", "1 2", "0").box, "block");
  assert.deepEqual(parseInputs("1 2", "3 4", " 2 "), { scores: [1, 2], values: [3, 4], block: 2 });
  // a block longer than the row reads every key at once, as the library's online_softmax does
  assert.deepEqual(parseInputs("1 2", "3 4", "9"), { scores: [1, 2], values: [3, 4], block: 9 });
});

test("the result says the online output equals the softmax at once, or that all is masked", () => {
  const scores = [0.5, 2, -1, 3], values = [1, 2, 3, 4];
  const text = describeResult(scores, values, online_softmax(scores, values, 1, 3));
  assert.match(text, /^After 2 blocks: o \/ l = 3\.\d{4}\./);
  const [online, atOnce] = [...text.matchAll(/(\d\.\d{4})/g)].map((m) => m[1]);
  assert.equal(online, atOnce);
  const none = [-Infinity, -Infinity];
  assert.match(describeResult(none, [1, 2], online_softmax(none, [1, 2], 1, 1)),
    /Every key is masked.*output 0.*nan/s);
  assert.match(describeResult([2], [5], online_softmax([2], [5], 1, 1)),
    /the one score at once.*\(exactly equal\)/s);
});

test("a key's cell shows its number in at most seven characters", () => {
  const cases = [[0.23, "0.23"], [-0.734, "−0.734"], [12345.6789, "1.2e4"], [1e-4, "1.0e−4"],
    [-1e6, "−1.0e6"], [0, "0"], [-Infinity, "−∞"], [999.4, "999"], [-1.25e-5, "−1.3e−5"]];
  for (const [x, text] of cases) {
    assert.equal(short(x), text);
    assert.ok(short(x).length <= 7, text);
  }
});
