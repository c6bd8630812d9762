// Part I's JavaScript twin (lib/attention_measured/book/js) against the Python library.
//
//   .venv/bin/python tools/js_fixtures.py _build/js-fixtures    # writes the library's numbers
//   node --test tests/js/                                       # runs this file
//
// ATTENTION_JS_FIXTURES names another fixture folder (default _build/js-fixtures, from the
// repository's root).  What must hold:
//   - exactly (the same bits): the random stream, the data, Python's round(), the initial
//     parameters;
//   - within TOLERANCE, |js − python| <= 1e-9 · max(1, |python|) (absolute below 1, relative
//     above): everything that passes through exp or through sums, whose last bits may differ
//     from numpy's: trained parameters, losses, accuracies, weights, removal effects.
// The largest differences seen are reported as test diagnostics.

import { describe, test } from "node:test";
import assert from "node:assert/strict";

import * as core from "../../lib/attention_measured/book/js/core.mjs";
import * as L from "../../lib/attention_measured/book/js/lesson.mjs";
import { fixture } from "./fixtures.mjs";

const TOLERANCE = 1e-9;

const flat = (params) => L.NAMES.flatMap((name) => Array.from(params[name]));
const paramsOf = (json) => Object.fromEntries(L.NAMES.map((n) => [n, Float64Array.from(json[n])]));
const readings = (data) => data.inputs.filter((_, k) => k % 2 === 0);

/** The same bits (Object.is: -0 is not 0). */
function assertSame(actual, expected, what) {
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < expected.length; i++) {
    if (!Object.is(actual[i], expected[i])) {
      assert.fail(`${what}[${i}]: got ${actual[i]}, the library has ${expected[i]}`);
    }
  }
}

/** Checks within TOLERANCE, keeping the largest difference seen per quantity. */
class Differences {
  worst = new Map();

  check(actual, expected, what, key = what) {
    assert.equal(actual.length, expected.length, `${what}: length`);
    const entry = this.worst.get(key) ?? { abs: 0, differ: 0, count: 0 };
    for (let i = 0; i < expected.length; i++) {
      const diff = Math.abs(actual[i] - expected[i]);
      if (!(diff <= TOLERANCE * Math.max(1, Math.abs(expected[i])))) {
        assert.fail(`${what}[${i}]: got ${actual[i]}, the library has ${expected[i]}`);
      }
      entry.abs = Math.max(entry.abs, diff);
      entry.differ += actual[i] !== expected[i];
      entry.count++;
    }
    this.worst.set(key, entry);
  }

  report(t) {
    for (const [key, e] of this.worst) {
      const largest = e.abs.toExponential(1);
      t.diagnostic(`${key}: ${e.differ} of ${e.count} differ, largest |js - python| ${largest}`);
    }
  }
}

// ------------------------------------------------------------------ exact: stream, data, init

describe("bit for bit", () => {
  test("the streams' starting states and first draws, 200 seeds", () => {
    const rng = fixture("rng.json");
    assert.equal(rng.seeds.length, 200);
    rng.seeds.forEach((seed, i) => {
      assert.equal(L.hash32(seed), rng.hashes[i], `hash32(${seed})`);
      assertSame(L.draws(seed, rng.first_draws[i].length), rng.first_draws[i], `draws(${seed})`);
    });
    assertSame(L.draws(rng.seeds, rng.first_draws[0].length), rng.first_draws.flat(), "draws");
  });

  test("long streams, and seeds up to 2**64 - 1", () => {
    const rng = fixture("rng.json");
    for (const { seed, draws } of rng.long) {
      assertSame(L.draws(seed, draws.length), draws, `draws(${seed})`);
    }
    for (const { seed, draws } of rng.big) {
      assertSame(L.draws(BigInt(seed), draws.length), draws, `draws(${seed}n)`);
      if (BigInt(seed) <= BigInt(Number.MAX_SAFE_INTEGER)) {
        assertSame(L.draws(Number(seed), draws.length), draws, `draws(${seed})`);
      }
    }
  });

  test("Python's round(), ties to even", () => {
    for (const [x, digits, want] of fixture("data.json").round) {
      assertSame([L.round(x, digits)], [want], `round(${x}, ${digits})`);
    }
  });

  test("the lesson's 720 sequences, and its training and held-out sets", () => {
    const want = fixture("data.json").lesson;
    const all = L.make_sequences();
    assertSame(readings(all), want.readings, "readings");
    assert.deepEqual(Array.from(all.markers), want.markers, "markers");
    assert.deepEqual(Array.from(all.labels), want.labels, "labels");
    all.markers.forEach((m, i) => {
      for (let t = 0; t < L.STEPS; t++) {
        assert.equal(all.inputs[(i * L.STEPS + t) * 2 + 1], t === m ? 1 : 0, "marker flags");
      }
    });
    const [train, heldout] = L.lesson_data();
    assert.deepEqual([train.length, heldout.length], [360, 180]);
    assertSame(train.inputs, all.inputs.subarray(0, 360 * 24), "training inputs");
    assertSame(heldout.inputs, all.inputs.subarray(540 * 24), "held-out inputs");
    assertSame(heldout.labels, all.labels.subarray(540), "held-out labels");
    assertSame(heldout.markers, all.markers.subarray(540), "held-out markers");
  });

  test("sequences from each fixture seed's streams", () => {
    const { per_seed, per_seed_n } = fixture("data.json");
    fixture("rng.json").seeds.forEach((seed, i) => {
      const got = L.make_sequences(per_seed_n, seed);
      assertSame(readings(got), per_seed[i].readings, `readings of seed ${seed}`);
      assert.deepEqual(Array.from(got.markers), per_seed[i].markers, `markers of seed ${seed}`);
      assert.deepEqual(Array.from(got.labels), per_seed[i].labels, `labels of seed ${seed}`);
    });
  });

  test("initial parameters, 200 seeds", () => {
    const { runs } = fixture("runs.json");
    assert.equal(runs.length, 200);
    for (const { seed, initial } of runs) assertSame(flat(L.init(seed)), flat(initial), `${seed}`);
  });

  test("training twice from one seed gives the same bits", () => {
    const once = L.train(10_000, { epochs: 20 });
    L.train(10_001, { epochs: 20 });
    const again = L.train(10_000, { epochs: 20 });
    assertSame(flat(again.params), flat(once.params), "params");
    assertSame(again.curve, once.curve, "curve");
  });
});

// ------------------------------------------------------------------ within 1e-9

describe("within 1e-9 of the library", () => {
  test("200 seeds trained: parameters, loss, accuracy, marker, removal", (t) => {
    const [train, heldout] = L.lesson_data();
    const example = heldout.slice(0, 1).inputs;
    const d = new Differences();
    for (const run of fixture("runs.json").runs) {
      const { params, curve } = L.train(run.seed);
      const of = `of seed ${run.seed}`;
      d.check(flat(params), flat(run.trained), `params ${of}`, "trained params");
      for (const [epoch, loss] of Object.entries(run.curve)) {
        d.check([curve[epoch]], [loss], `loss at ${epoch} ${of}`, "loss curve");
      }
      d.check([L.accuracy(params, train)], [run.train_accuracy], `accuracy ${of}`, "accuracy");
      d.check([L.accuracy(params, heldout)], [run.heldout_accuracy], `accuracy ${of}`, "accuracy");
      const [weight, hit] = L.marker_weight(params, heldout);
      d.check([weight], [run.marker_weight], `marker_weight ${of}`, "marker_weight");
      d.check([hit], [run.marker_hit_rate], `marker_hit_rate ${of}`, "marker_hit_rate");
      // what dropping the marker does against dropping any other step, over the held-out set
      const effects = L.effects(...L.removal_effects(params, heldout.inputs));
      let marker = 0, other = 0, influential = 0;
      heldout.markers.forEach((m, i) => {
        for (let t = 0; t < L.STEPS; t++) {
          if (t === m) marker += effects[i * L.STEPS + t];
          else other += effects[i * L.STEPS + t];
        }
        influential += core.argmax(effects, i * L.STEPS, L.STEPS) === m;
      });
      const n = heldout.length;
      d.check([marker / n], [run.marker_effect], `marker_effect ${of}`, "removal effects");
      d.check([other / (n * 11)], [run.other_effect], `other_effect ${of}`, "removal effects");
      d.check([influential / n], [run.influential_is_marker], `influential ${of}`, "shares");
      const weights = L.forward(params, example).weights;
      d.check(weights, run.example_weights, `example weights ${of}`, "example weights");
      const own = L.effects(...L.removal_effects(params, example));
      d.check(own, run.example_effects, `example effects ${of}`, "removal effects");
    }
    d.report(t);
  });

  test("train's options: another data seed, epochs and learning rate", (t) => {
    const { seed, options, trained, curve } = fixture("runs.json").options;
    const d = new Differences();
    const got = L.train(seed, options);
    d.check(flat(got.params), flat(trained), "params (options)");
    d.check(got.curve, curve, "loss curve (options)");
    d.report(t);
  });

  test("seed_report: the seed explorer's numbers", () => {
    const d = new Differences();
    for (const run of fixture("runs.json").runs.slice(0, 3)) {
      const r = L.seed_report(run.seed);
      assert.equal(r.seed, run.seed);
      d.check(flat(r.params), flat(run.trained), "params");
      d.check([r.curve[199]], [run.curve["199"]], "loss");
      d.check([r.heldout_accuracy], [run.heldout_accuracy], "heldout_accuracy");
      d.check([r.marker_weight], [run.marker_weight], "marker_weight");
      d.check([r.marker_hit_rate], [run.marker_hit_rate], "marker_hit_rate");
      d.check(r.weights, run.example_weights, "weights");
      d.check(r.effects, run.example_effects, "effects");
      assert.equal(r.marker, L.lesson_data()[1].markers[0]);
    }
    const other = L.seed_report(10_000, 7);
    assert.equal(other.marker, L.lesson_data()[1].markers[7]);
  });

  test("forward passes, removal tests, losses and gradients", (t) => {
    const { cases } = fixture("forward.json");
    const [train, heldout] = L.lesson_data();
    const d = new Differences();
    for (const c of cases) {
      const params = paramsOf(c.params);
      const data = { train, heldout }[c.stored_as] ?? { inputs: c.inputs, labels: c.labels };
      const keep = c.keep ?? null;
      const out = L.forward(params, data.inputs, { keep });
      d.check(out.output, c.output, `${c.name}: output`, "logits");
      d.check(out.weights, c.weights, `${c.name}: weights`, "weights");
      d.check(out.parts.scores, c.scores, `${c.name}: scores`, "scores");
      d.check(out.parts.pooled, c.pooled, `${c.name}: pooled`, "pooled");
      const [p, without] = L.removal_effects(params, data.inputs);
      d.check(p, c.p, `${c.name}: p`, "p");
      d.check(without, c.p_without, `${c.name}: p_without`, "p_without");
      const [loss, grads] = L.loss_and_grads(params, data.inputs, data.labels);
      d.check([loss], [c.loss], `${c.name}: loss`, "loss");
      d.check(flat(grads), flat(c.grads), `${c.name}: gradients`, "gradients");
    }
    assert.ok(cases.some((c) => c.keep?.length === 12) && cases.some((c) => c.keep?.length > 12));
    d.report(t);
  });

  test("softmax, drop_each_step, sigmoid, log(1 + e^z)", (t) => {
    const c = fixture("forward.json").core;
    const d = new Differences();
    for (const s of c.softmax) {
      d.check(core.softmax(s.scores, s.m), s.plain, "softmax");
      d.check(core.softmax(s.scores, s.m, s.keep), s.kept, "softmax, some steps kept");
    }
    d.check(core.drop_each_step(c.drop_each_step.scores), c.drop_each_step.out, "drop_each_step");
    d.check(c.logit.map(core.sigmoid), c.sigmoid, "sigmoid");
    d.check(c.logit.map(core.softplus), c.softplus, "softplus");
    d.report(t);
  });
});

// ------------------------------------------------------------------ refusals

describe("bad input is refused, naming the argument", () => {
  const throwsNaming = (fn, name, kind = Error) =>
    assert.throws(fn, (e) => e instanceof kind && e.message.includes(name), `refuse ${name}`);

  test("seeds", () => {
    for (const bad of [-1, 1.5, NaN, Infinity, "7", true, null, undefined, {}, [3]]) {
      if (!Array.isArray(bad)) throwsNaming(() => L.draws(bad, 3), "seeds");
      throwsNaming(() => L.draws([1, bad], 3), "seeds");
      throwsNaming(() => L.check_seed(bad, "my_seed"), "my_seed");
      throwsNaming(() => L.init(bad), "seed");
      throwsNaming(() => L.hash32(bad), "seed");
      throwsNaming(() => L.train(bad), "seed");
      throwsNaming(() => L.seed_report(bad), "seed");
      if (bad !== undefined) {
        // undefined is a missing argument in JavaScript: these then take the lesson's seed
        throwsNaming(() => L.make_sequences(2, bad), "seed");
        throwsNaming(() => L.lesson_data(bad), "data_seed");
        throwsNaming(() => L.train(1, { data_seed: bad }), "data_seed");
      }
    }
    for (const huge of [2 ** 53, 2 ** 64, 1e300, -1n, 2n ** 64n]) {
      throwsNaming(() => L.init(huge), "seed", RangeError);
      throwsNaming(() => L.hash32(huge), "seed", RangeError);
    }
    throwsNaming(() => L.draws([], 3), "seeds", RangeError);
    throwsNaming(() => L.make_sequences(2, 2n ** 64n - 1n), "seed", RangeError);
    assert.equal(L.make_sequences(1, 2n ** 64n - 1n).length, 1);
  });

  test("counts, options and hyper-parameters", () => {
    for (const bad of [-1, 2.5, NaN, "3", 1_000_001]) throwsNaming(() => L.draws(1, bad), "count");
    for (const bad of [0, -2, 1.5, "720", 2e6]) throwsNaming(() => L.make_sequences(bad), "n");
    for (const bad of [0, 100_001, 2.5, "200"]) {
      throwsNaming(() => L.train(1, { epochs: bad }), "epochs");
    }
    for (const bad of [0, -0.6, NaN, Infinity, "0.6"]) {
      throwsNaming(() => L.train(1, { learning_rate: bad }), "learning_rate must be");
    }
    throwsNaming(() => L.train(1, { learning_rate: 1e300, epochs: 5 }), "learning_rate");
    throwsNaming(() => L.train(1, { epoch: 5 }), "epoch", TypeError);
    throwsNaming(() => L.train(1, 200), "options", TypeError);
    throwsNaming(() => L.forward(L.init(1), new Float64Array(24), { kept: [] }), "kept", TypeError);
    for (const bad of [-1, 180, 0.5, "0"]) {
      throwsNaming(() => L.seed_report(1, bad), "example_index");
    }
    throwsNaming(() => L.round(0.5, 21), "ndigits");
    throwsNaming(() => L.round(NaN, 3), "x");
  });

  test("data, parameters, inputs, masks and labels", () => {
    const [train, heldout] = L.lesson_data();
    const good = L.init(1), x = heldout.inputs;
    throwsNaming(() => L.accuracy(good, x), "data", TypeError);
    throwsNaming(() => L.marker_weight(good, null), "data", TypeError);
    throwsNaming(() => L.forward(null, x), "params", TypeError);
    throwsNaming(() => L.forward({ ...good, query: undefined }, x), "params.query", TypeError);
    const { bias, ...noBias } = good;
    throwsNaming(() => L.forward(noBias, x), "params.bias");
    assert.deepEqual(L.forward({ ...good, bias: bias[0] }, x), L.forward(good, x));
    throwsNaming(() => L.forward({ ...good, W_K: new Float64Array(5) }, x), "params.W_K");
    throwsNaming(() => L.forward({ ...good, readout: [1, NaN, 0] }, x), "params.readout");
    const text = [1, 2, 3, 4, 5, "6"];
    throwsNaming(() => L.forward({ ...good, W_V: text }, x), "params.W_V", TypeError);
    throwsNaming(() => L.forward(good, new Float64Array(25)), "inputs", RangeError);
    throwsNaming(() => L.forward(good, new Float64Array(0)), "inputs", RangeError);
    throwsNaming(() => L.forward(good, "inputs"), "inputs", TypeError);
    throwsNaming(() => L.forward(good, heldout), "inputs", TypeError);
    throwsNaming(() => L.forward(good, [0, Infinity, ...new Array(22).fill(0)]), "inputs");
    throwsNaming(() => L.forward(good, x, { keep: [true, false] }), "keep", RangeError);
    throwsNaming(() => L.forward(good, x, { keep: new Array(12).fill(1) }), "keep", TypeError);
    throwsNaming(() => L.removal_effects(good, x.subarray(1)), "inputs", RangeError);
    throwsNaming(() => L.loss_and_grads(good, x, heldout.labels.slice(1)), "labels", RangeError);
    throwsNaming(() => L.loss_and_grads(good, x, new Float64Array(180).fill(0.5)), "labels");
    throwsNaming(() => L.loss_and_grads(good, train.inputs, undefined), "labels", TypeError);
    throwsNaming(() => L.effects(new Float64Array(2), new Float64Array(5)), "p_without");
    throwsNaming(() => L.effects("p", new Float64Array(12)), "p", TypeError);
  });
});
