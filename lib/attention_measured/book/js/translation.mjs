// Part IV's small language in the reader's page: the grammar's own translation of a typed
// sentence, with the true alignment of every word, and the words as the translators' ids.  Twin
// of tasks/translation.py (translate, encode_source, decode_target and the vocabularies they
// read), given the library's LEXICON and SPECIALS as the page carries them, so that the words
// are written once, in the library.
//
// The grammar: a clause is a noun phrase (a determiner, perhaps an adjective, a noun), a verb,
// a noun phrase, and perhaps a preposition with a third noun phrase; clauses are joined by
// "and".  The translation puts each adjective after its noun, each place before the verb and
// each verb at the end of its clause.
import { shown } from "./core.mjs";

/** An Error with the library's `message` and, for the page's own wording, `reason` ("empty",
 * "unknown", "noun phrase", "verb" or "and"), and `words` (unknown) or `at` (a position). */
function refusal(message, reason, detail = {}) {
  return Object.assign(new Error(message), { reason, ...detail });
}

/** The language of `lexicon` ({part of speech: {source word: target word}}, the library's
 * LEXICON, in its order) and `specials` (<pad>, <s>, </s>): {source, target} words in id order,
 * the dictionary and each source word's part of speech, as tasks/translation.py builds them. */
export function language(lexicon, specials) {
  if (lexicon === null || typeof lexicon !== "object" || !Array.isArray(specials)) {
    throw new TypeError(`lexicon and specials must be the library's LEXICON and SPECIALS, got ` +
      `${shown(lexicon)} and ${shown(specials)}`);
  }
  const dictionary = new Map(), kind = new Map();
  for (const [part, words] of Object.entries(lexicon)) {
    for (const [source, target] of Object.entries(words)) {
      dictionary.set(source, target);
      kind.set(source, part);
    }
  }
  return {
    source: [...specials, ...dictionary.keys()],
    target: [...specials, ...dictionary.values()],
    dictionary,
    kind,
    specials,
  };
}

/** The words of a typed sentence: lower-cased, split at anything that is not a letter (so that a
 * full stop or a comma is ignored). */
export function words_of(text) {
  if (typeof text !== "string") throw new TypeError(`text must be a string, got ${shown(text)}`);
  return text.toLowerCase().match(/[a-z]+/g) ?? [];
}

/** translation.translate: {source, target, alignment} for the source `words` of `lang`,
 * alignment[i] the source position that target word i translates; or an Error with the
 * library's message for an unknown word or a sentence the grammar cannot parse. */
export function translate(words, lang) {
  if (!Array.isArray(words) || words.some((w) => typeof w !== "string")) {
    throw new TypeError(`words must be an array of words, got ${shown(words)}`);
  }
  if (!words.length) return refusal("source must hold a sentence, got no words", "empty");
  const unknown = [...new Set(words.filter((w) => !lang.dictionary.has(w)))].sort();
  if (unknown.length) {
    const listed = unknown.map((w) => `'${w}'`).join(", ");
    return refusal(`unknown source words [${listed}]; the dictionary is translation.LEXICON`,
      "unknown", { words: unknown });
  }
  const sentence = words.join(" ");
  const part = (at) => lang.kind.get(words[at]);
  /** The length of the noun phrase at `at`, 2 or 3, or null. */
  const phrase = (at) => {
    if (at < words.length && part(at) === "determiner") {
      if (at + 1 < words.length && part(at + 1) === "noun") return 2;
      if (at + 2 < words.length && part(at + 1) === "adjective" && part(at + 2) === "noun") {
        return 3;
      }
    }
    return null;
  };
  const expected = (what, at) => refusal(`expected ${what} at word ${at} of '${sentence}'`,
    what === "'and' or the end" ? "and" : what.replace(/^an? /, ""), { at });
  const inOrder = (start, length) => (length === 2 ? [start, start + 1]
    : [start, start + 2, start + 1]);
  const order = [];
  let position = 0;
  for (;;) {
    const start = position, subject = phrase(position);
    if (subject === null) {
      return expected("a noun phrase", position);
    }
    const verb = position + subject;
    if (verb >= words.length || part(verb) !== "verb") {
      return expected("a verb", verb);
    }
    const object = phrase(verb + 1);
    if (object === null) {
      return expected("a noun phrase", verb + 1);
    }
    const clause = [...inOrder(start, subject), ...inOrder(verb + 1, object)];
    position = verb + 1 + object;
    if (position < words.length && part(position) === "preposition") {
      const place = phrase(position + 1);
      if (place === null) {
        return expected("a noun phrase", position + 1);
      }
      clause.push(...inOrder(position + 1, place), position);
      position += 1 + place;
    }
    order.push(...clause, verb);
    if (position === words.length) break;
    if (part(position) !== "conjunction") {
      return expected("'and' or the end", position);
    }
    order.push(position);
    position += 1;
  }
  return {
    source: words,
    target: order.map((i) => lang.dictionary.get(words[i])),
    alignment: order,
  };
}

/** translation.encode_source: the source ids of `words` (known words only). */
export function encode_source(words, lang) {
  return words.map((w) => {
    const id = lang.source.indexOf(w);
    if (id < 0 || lang.specials.includes(w)) {
      throw new RangeError(`words holds unknown tokens ['${w}']; the vocabulary is SOURCE_WORDS`);
    }
    return id;
  });
}

/** translation.decode_target: the target words of `ids`, stopping before the first </s>. */
export function decode_target(ids, lang) {
  const out = [];
  for (const id of ids) {
    if (!Number.isInteger(id) || id < 0 || id >= lang.target.length) {
      throw new RangeError(`ids must be target ids from 0 to ${lang.target.length - 1}, ` +
        `got ${shown(id)}`);
    }
    if (lang.target[id] === lang.specials[2]) break;
    out.push(lang.target[id]);
  }
  return out;
}
