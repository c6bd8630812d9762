// How long Part I's network takes to train in JavaScript (lib/attention_measured/book/js), the
// page's seed explorer's work, and how long the other live explorers take to answer a change:
// `node bench/bench_js.mjs`.  Times train(seed) for the hundred
// init seeds of the lesson's sweep, after a warm-up, and prints the median and the best beside
// the target.  It reports; it never fails.
import { forward as readSentence, WIDTH } from "../lib/attention_measured/book/js/cloze_head.mjs";
import { DATA_SEED, init, seed_report, train } from "../lib/attention_measured/book/js/lesson.mjs";
import { dropReport } from "../lib/attention_measured/book/js/lesson_page.mjs";
import { language } from "../lib/attention_measured/book/js/translation.mjs";
import { translation_of, unpackModel } from "../lib/attention_measured/book/js/translation_page.mjs";
import { FOLDER } from "../tests/js/fixtures.mjs";
import fs from "node:fs";

const TARGET_MS = 100; // "Part I's network trains in the page in under 100 ms"
const SEEDS = Array.from({ length: 100 }, (_, i) => DATA_SEED + 1 + i); // the sweep's hundred

function timings(work) {
  return SEEDS.map((seed) => {
    const start = performance.now();
    work(seed);
    return performance.now() - start;
  }).sort((a, b) => a - b);
}

for (let i = 0; i < 10; i++) seed_report(i); // warm-up: the compiler, the training data
const median = (times) => (times[49] + times[50]) / 2;
const trained = timings((seed) => train(seed));
const reported = timings((seed) => seed_report(seed));
console.log(`Part I's network in JavaScript, Node ${process.version}, 100 seeds:`);
const [tm, tbest] = [median(trained).toFixed(1), trained[0].toFixed(1)];
console.log(
  `  train(seed)        median ${tm} ms, best ${tbest} ms   target: under ${TARGET_MS} ms ` +
    `("Part I's network trains in the page in under ${TARGET_MS} ms")`,
);
const [m, best] = [median(reported).toFixed(1), reported[0].toFixed(1)];
console.log(`  seed_report(seed)  median ${m} ms, best ${best} ms   (training and the measures)`);

// The other explorers' work on each change the reader makes: a drop (two forward passes), and a
// typed sentence of 19 words read by the position query's head (random weights of the head's
// sizes: the time does not depend on their values).

function medianOf(work, times = 200) {
  const out = [];
  for (let i = 0; i < times; i++) {
    const start = performance.now();
    work(i);
    out.push(performance.now() - start);
  }
  return out.sort((a, b) => a - b)[Math.floor(times / 2)];
}

const runs = [init(DATA_SEED + 1), init(DATA_SEED + 2)];
dropReport(runs, 0, 0); // warm-up, and the held-out sequences drawn once
const drop = medianOf((i) => dropReport(runs, i % 180, i % 12));
const [V, d] = [98, WIDTH];
const random = (n) => Float64Array.from({ length: n }, (_, i) => Math.sin(i) * 0.1);
const head = { E: random(V * d), W_Q: random(d * d), W_K: random(d * d), W_V: random(d * d),
  W_O: random(d * V), positions: random(19 * d) };
const ids = Array.from({ length: 19 }, (_, i) => (i * 7) % V);
const read = medianOf(() => readSentence(head, ids));
console.log(`  dropReport         median ${drop.toFixed(2)} ms   (one drop, both runs)`);
console.log(`  a typed sentence   median ${read.toFixed(2)} ms   (19 words, one head)`);

// Part IV's translators on a typed sentence: what the page computes on each change, for both
// models (translation_of: the translation, the weights along it, and those given the true
// previous words), on the trained weights the page carries (from the JS fixtures; the time
// depends on when each beam writes </s>).  Test sentences of 12, 22 and 40 words.
const TRANSLATION_TARGET_MS = 50; // "a translation appears in under 50 ms"
const file = `${FOLDER}/translators.json`;
if (!fs.existsSync(file)) {
  console.log(`  (no ${file}: make bench writes it, as make test-js does)`);
} else {
  const { page, models: cases } = JSON.parse(fs.readFileSync(file, "utf8"));
  const lang = language(page.lexicon, page.specials);
  const translators = Object.values(page.models).map(unpackModel);
  const bothModels = (words, beam) => translators.map((m) => translation_of(m, lang, words, beam));
  const sentences = [12, 22, 40].map((n) =>
    cases.Transformer.cases.find((c) => c.source.length === n).source);
  console.log(`Part IV's translators in JavaScript, both models, greedy and beam search ` +
    `(target: under ${TRANSLATION_TARGET_MS} ms):`);
  for (const words of sentences) {
    const times = [1, 4, 8, 16].map((beam) => {
      bothModels(words, beam); // warm-up
      return `beam ${beam} ${medianOf(() => bothModels(words, beam), 21).toFixed(1)} ms`;
    });
    console.log(`  ${String(words.length).padStart(2)} words: ${times.join(", ")}`);
  }
}
