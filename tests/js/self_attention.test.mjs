// Part II's self-attention in JavaScript (lib/attention_measured/book/js/self_attention.mjs)
// against the Python library, and what the worked example's page accepts in its boxes
// (worked_example_page.mjs).
//
//   .venv/bin/python tools/js_fixtures.py _build/js-fixtures    # writes self_attention.json
//   node --test tests/js/                                       # runs this file
//
// Every number is held to |js − python| <= 1e-12 · max(1, |python|): numpy's matrix products
// may add in another order (or fuse a multiply and an add), and V8's exp may differ from
// numpy's in the last bit.  A row whose mask allows no key must be exactly zero, as in the
// library.  The browser tests (tests/browser/test_pages.py) type into the built page.

import { describe, test } from "node:test";
import assert from "node:assert/strict";

import {
  causal_mask,
  empty_rows,
  self_attention,
} from "../../lib/attention_measured/book/js/self_attention.mjs";
import {
  formatNumber,
  LARGEST,
  parseEntry,
  RANGE,
} from "../../lib/attention_measured/book/js/worked_example_page.mjs";
import { shade } from "../../lib/attention_measured/book/js/colours.mjs";
import { fixture } from "./fixtures.mjs";

const TOLERANCE = 1e-12;
const QUANTITIES = ["Q", "K", "V", "scores", "weights", "output"];

/** The page's computation of a fixture case. */
function computed(c) {
  return self_attention(c.X, c.W_Q, c.W_K, c.W_V, c.n, { scale: c.scale, mask: c.mask });
}

/** Every quantity of `got` within TOLERANCE of the case's; returns the largest difference. */
function assertClose(got, c, what) {
  let largest = 0;
  for (const name of QUANTITIES) {
    assert.equal(got[name].length, c[name].length, `${what}: ${name}'s length`);
    got[name].forEach((value, i) => {
      const diff = Math.abs(value - c[name][i]);
      if (!(diff <= TOLERANCE * Math.max(1, Math.abs(c[name][i])))) {
        assert.fail(`${what}: ${name}[${i}] is ${value}, the library has ${c[name][i]}`);
      }
      largest = Math.max(largest, diff);
    });
  }
  return largest;
}

describe("within 1e-12 of the library", () => {
  test("200 random cases: sizes, masks with empty rows, the division by √d on and off", (t) => {
    const { cases } = fixture("self_attention.json");
    assert.equal(cases.length, 200);
    let largest = 0, emptyRows = 0;
    cases.forEach((c, k) => {
      const got = computed(c);
      largest = Math.max(largest, assertClose(got, c, `case ${k}`));
      // a row that may attend to nothing: weights and output exactly zero, as in the library
      for (const i of c.mask ? empty_rows(c.mask, c.n) : []) {
        emptyRows++;
        const row = got.weights.subarray(i * c.n, (i + 1) * c.n);
        assert.ok(row.every((w) => w === 0), `case ${k}: row ${i} allows nothing`);
        const dv = got.output.length / c.n;
        assert.ok(got.output.subarray(i * dv, (i + 1) * dv).every((o) => o === 0));
      }
    });
    // the fixture covers what it claims to
    const sizes = (key) => new Set(cases.map((c) => c[key]));
    assert.deepEqual([...sizes("n")].sort(), [1, 2, 3, 4, 5, 6]);
    assert.deepEqual([...sizes("scale")].sort(), [false, true]);
    assert.ok(cases.some((c) => c.mask === null));
    assert.ok(emptyRows >= 50, `only ${emptyRows} rows allowing nothing`);
    t.diagnostic(`largest |js - python| ${largest.toExponential(1)} over 200 cases`);
  });

  test("the worked example, with and without √d and with a causal mask", () => {
    const { worked } = fixture("self_attention.json");
    for (const [what, c] of Object.entries(worked)) {
      if (what !== "tokens") assertClose(computed(c), c, what);
    }
  });
});

describe("the worked example, by pencil", () => {
  const X = [1, 0, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0];
  const W_Q = [1, 0, 0, 1, 1, 0, 0, 1], W_K = [0, 1, 1, 0, 0, 1, 1, 0];
  const W_V = [1, 0, 0, 2, 0, 1, 0, 0];
  const close = (a, b) => Array.from(a).every((x, i) => Math.abs(x - b[i]) < 1e-15);

  test("the numbers the page's prose reads off, every one", () => {
    const r = self_attention(X, W_Q, W_K, W_V, 3);
    assert.deepEqual([r.n, r.d_model, r.d, r.dv], [3, 4, 2, 2]);
    assert.deepEqual(Array.from(r.Q), [2, 0, 0, 2, 1, 1]); // the query of "the" is (2, 0)
    assert.deepEqual(Array.from(r.K), [0, 2, 2, 0, 1, 1]);
    assert.deepEqual(Array.from(r.V), [1, 1, 0, 2, 1, 2]);
    const s = Math.SQRT2;
    assert.ok(close(r.scores, [0, 4 / s, 2 / s, 4 / s, 0, 2 / s, 2 / s, 2 / s, 2 / s]));
    const e = [1, Math.exp(4 / s), Math.exp(2 / s)];
    const sum = e[0] + e[1] + e[2];
    assert.ok(close(r.weights.subarray(0, 3), e.map((x) => x / sum)));
    assert.deepEqual(Array.from(r.weights.subarray(0, 3), (w) => w.toFixed(3)),
      ["0.045", "0.768", "0.187"]);
    assert.ok(close(r.weights.subarray(6), [1 / 3, 1 / 3, 1 / 3])); // "sat": a third each
    assert.ok(close(r.output.subarray(4), [2 / 3, 5 / 3])); // the mean of the values
  });

  test("without √d, the scores are the dot products themselves", () => {
    const r = self_attention(X, W_Q, W_K, W_V, 3, { scale: false });
    assert.deepEqual(Array.from(r.scores), [0, 4, 2, 4, 0, 2, 2, 2, 2]);
  });

  test("a causal mask: “the” attends to itself alone; a row allowing nothing is zeros", () => {
    const r = self_attention(X, W_Q, W_K, W_V, 3, { mask: causal_mask(3) });
    assert.deepEqual(Array.from(r.weights.subarray(0, 3)), [1, 0, 0]);
    assert.deepEqual(Array.from(r.output.subarray(0, 2)), [1, 1]); // the value of "the"
    const none = [true, true, true, false, false, false, 1, 1, 1];
    const z = self_attention(X, W_Q, W_K, W_V, 3, { mask: none });
    assert.deepEqual(Array.from(z.weights.subarray(3, 6)), [0, 0, 0]);
    assert.deepEqual(Array.from(z.output.subarray(2, 4)), [0, 0]);
    assert.deepEqual(empty_rows(none, 3), [1]);
    assert.deepEqual(empty_rows(null, 3), []);
  });

  test("the page's largest entries keep every number finite", () => {
    const big = (count, sign = 1) => new Array(count).fill(sign * LARGEST);
    for (const scale of [true, false]) {
      const r = self_attention(big(12), big(8), big(8, -1), big(8), 3, { scale });
      for (const name of QUANTITIES) assert.ok(r[name].every(Number.isFinite), name);
      assert.ok(close(r.weights, new Array(9).fill(1 / 3)));
    }
  });
});

describe("bad input", () => {
  const X = [1, 0, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0];
  const W = [1, 0, 0, 1, 1, 0, 0, 1];

  test("causal_mask(steps) is lower-triangular, and refuses a step count below 1", () => {
    assert.deepEqual(Array.from(causal_mask(3)), [1, 0, 0, 1, 1, 0, 1, 1, 1]);
    assert.deepEqual(Array.from(causal_mask(1)), [1]);
    assert.throws(() => causal_mask(0), { name: "RangeError", message: /steps/ });
    assert.throws(() => causal_mask(2.5), { name: "TypeError", message: /steps/ });
  });

  test("self_attention names the argument it refuses", () => {
    for (const [args, name, says] of [
      [[X, W, W, W, 0], "RangeError", /^n must be an integer between 1/],
      [[X, W, W, W, "3"], "TypeError", /^n must be an integer/],
      [[X, W, W, W, 5], "RangeError", /^X must be \(n, d_model\)/],
      [["X", W, W, W, 3], "TypeError", /^X must be a Float64Array/],
      [[[...X.slice(0, 11), NaN], W, W, W, 3], "RangeError", /^X must hold finite numbers/],
      [[X, W.slice(0, 7), W, W, 3], "RangeError", /^W_Q must be \(d_model, d\)/],
      [[X, [], W, W, 3], "RangeError", /^W_Q must be/],
      [[X, W, W.slice(0, 4), W, 3], "RangeError", /^W_K must hold 8 numbers/],
      [[X, W, W, [1, 2, 3], 3], "RangeError", /^W_V must be \(d_model, dv\)/],
      [[X, W, W, [1, 2, 3, Infinity], 3], "RangeError", /^W_V must hold finite numbers/],
      [[X, W, W, W, 3, { scale: 1 }], "TypeError", /^scale must be true or false/],
      [[X, W, W, W, 3, { masks: null }], "TypeError", /^unknown option masks/],
      [[X, W, W, W, 3, null], "TypeError", /^options must be an object/],
      [[X, W, W, W, 3, { mask: [1, 1, 1] }], "RangeError", /^mask must hold n \* n = 9/],
      [[X, W, W, W, 3, { mask: "all" }], "TypeError", /^mask must be null or an array/],
      [[X, W, W, W, 3, { mask: new Array(9).fill(2) }], "TypeError", /^mask must hold booleans/],
      [[X.map((x) => x * 1e200), W, W, W, 3], "RangeError", /too large: scores is not finite/],
    ]) {
      assert.throws(() => self_attention(...args), { name, message: says }, String(says));
    }
  });

  test("a box takes a number from -1e6 to 1e6, written as a reader writes one", () => {
    for (const [text, value] of [
      ["1", 1], [" -0.5 ", -0.5], ["+2", 2], [".25", 0.25], ["3.", 3], ["2e-3", 0.002],
      ["1E6", 1e6], ["-1000000", -1e6], ["−1.5", -1.5], ["-0", 0],
    ]) {
      assert.ok(Object.is(parseEntry(text), value), `${text} -> ${parseEntry(text)}`);
    }
  });

  test("anything else is an Error that says why and what an entry is", () => {
    for (const [text, says] of [
      ["", /^type a number here\.$/],
      ["   ", /^type a number here/],
      ["abc", /^“abc” is not a number/],
      ["1,5", /^“1,5” is not a number/],
      ["0x10", /^“0x10” is not a number/],
      ["1/2", /^“1\/2” is not a number/],
      ["2 3", /^“2 3” is not a number/],
      ["Infinity", /^“Infinity” is not a finite number/],
      ["-inf", /^“-inf” is not a finite number/],
      ["NaN", /^“NaN” is not a finite number/],
      ["1e999", /^“1e999” is not a finite number/],
      ["1000000.5", /^“1000000\.5” is out of range\.$/],
      ["-2e6", /^“-2e6” is out of range\.$/],
    ]) {
      const result = parseEntry(text);
      assert.ok(result instanceof Error, `${JSON.stringify(text)} gave ${result}`);
      assert.match(result.message, says);
      // the range is said once in the frame (RANGE), not in every message
      assert.doesNotMatch(result.message, /from|1,000,000/);
    }
    assert.match(parseEntry("x".repeat(50)).message, /^“x{20}…” is not a number/);
  });

  test("the frame says once what an entry may be, from LARGEST", () => {
    assert.equal(LARGEST, 1e6);
    assert.equal(RANGE, "entries: numbers from −1,000,000 to 1,000,000");
    assert.ok(Object.is(parseEntry("-1000000"), -LARGEST));
    assert.ok(parseEntry(String(LARGEST + 0.5)) instanceof Error);
  });
});

describe("what the page prints", () => {
  test("numbers to their digits, large ones in four significant digits, never -0", () => {
    assert.equal(formatNumber(0.7679179361387025, 3), "0.768");
    assert.equal(formatNumber(2.82842712474619, 2), "2.83");
    assert.equal(formatNumber(-1e-9, 3), "0.000");
    assert.equal(formatNumber(-0, 2), "0.00");
    assert.equal(formatNumber(-0.004, 2), "0.00");
    assert.equal(formatNumber(-0.5, 2), "-0.50");
    assert.equal(formatNumber(3.6e25, 2), "3.600e+25");
    assert.equal(formatNumber(-123456, 2), "-1.235e+5");
  });

  test("a weight's cell runs from white to the book's blue, its text readable on either", () => {
    assert.deepEqual(shade(0), { background: "rgb(255, 255, 255)", color: "#000000" });
    assert.deepEqual(shade(1), { background: "rgb(0, 114, 178)", color: "#ffffff" });
    const luminance = (rgb) => {
      const lin = rgb.map((c) => (c / 255 <= 0.04045 ? c / 255 / 12.92 :
        ((c / 255 + 0.055) / 1.055) ** 2.4));
      return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2];
    };
    for (let k = 0; k <= 1000; k++) {
      const { background, color } = shade(k / 1000);
      const bg = luminance(background.match(/\d+/g).map(Number));
      const fg = color === "#000000" ? 0 : 1;
      const ratio = (Math.max(bg, fg) + 0.05) / (Math.min(bg, fg) + 0.05);
      assert.ok(ratio >= 4.5, `weight ${k / 1000}: contrast ${ratio.toFixed(2)}`);
    }
  });
});
