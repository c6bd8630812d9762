// How long Part I's network takes to train in JavaScript (lib/attention_measured/book/js), the
// page's seed explorer's work: `node bench/bench_js.mjs`.  Times train(seed) for the hundred
// init seeds of the lesson's sweep, after a warm-up, and prints the median and the best beside
// the target.  It reports; it never fails.
import { DATA_SEED, seed_report, train } from "../lib/attention_measured/book/js/lesson.mjs";

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
