// The offline stand-in model's reading of a string argument (standin-model.mjs
// for plugin tools, standin-mcp.mjs for MCP tools): a parameter that holds a
// text gets the user's words whole; any other (a city, a name, a term to look
// up) gets the word or phrase a person would pass, so that a table-lookup tool
// works offline with "What's the weather in London tomorrow?" as it would with
// a model. The README's trigger table says so (standin-triggers.mjs).

/** Words of a parameter's name that say it holds a text: it gets the user's words whole. */
const TEXT_WORDS = new Set(
  "text content message body note prompt question description instruction instructions summary comment".split(" ").flatMap((word) => [word, `${word}s`]),
);
/** The words of a name: `noteText`, `note_text` and `note-text` are "note" and "text". @param {string} name */
const wordsOf = (name) =>
  name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/);
/** @param {string} name */
const namesText = (name) => wordsOf(name).some((word) => TEXT_WORDS.has(word));

/** Words that start a phrase after `in`, `for` or `about` and are skipped. */
const ARTICLES = new Set(["the", "a", "an", "my", "your", "our", "their", "his", "her", "its", "this", "that", "these", "those"]);
/** Words that end a phrase: times, fillers, verbs and the prepositions that start another one. */
const STOPS = new Set(
  (
    "tomorrow today tonight yesterday now later soon please thanks and or but so then if when while because with at on to from by in for about into " +
    "is are was were be been will would can could should do does did next last this that weekend week month year morning afternoon evening night"
  ).split(" "),
);
/** At most this many words: a phrase, not a sentence. */
const MAX_WORDS = 4;
const FIRST_PERSON = /^I(?:'[a-z]+|’[a-z]+)?$/;

/** @param {string} raw a word as written @returns {string} the word without the punctuation around it */
const bare = (raw) => raw.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "");
/** @param {string} raw */
const endsClause = (raw) => /[.,;:!?)"”]$/.test(raw);
/** @param {string} raw */
const endsSentence = (raw) => /[.!?]["”)]?$/.test(raw);
/** @param {string} word */
const capitalised = (word) => /^\p{Lu}/u.test(word) && !FIRST_PERSON.test(word);

/**
 * The word or phrase a person would pass as a short argument, or undefined
 * when there is none: the first run of capitalised words that does not open
 * a sentence (`London`, `New York`, `AAPL`), else the words after the first
 * `in`, `for` or `about` that has any (articles skipped, ending at a time
 * word, another preposition or punctuation), at most four words.
 * @param {string} userText
 * @returns {string | undefined}
 */
function likelyPhrase(userText) {
  const raws = userText.split(/\s+/).filter((raw) => bare(raw) !== "");
  const opensSentence = (i) => i === 0 || endsSentence(raws[i - 1] ?? "");
  for (let i = 0; i < raws.length; i++) {
    if (opensSentence(i) || !capitalised(bare(raws[i] ?? ""))) continue;
    const run = [];
    for (let j = i; j < raws.length && run.length < MAX_WORDS; j++) {
      const raw = raws[j] ?? "";
      if (j > i && (opensSentence(j) || !capitalised(bare(raw)))) break;
      run.push(bare(raw));
      if (endsClause(raw)) break;
    }
    return run.join(" ");
  }
  for (let i = 0; i < raws.length; i++) {
    if (!/^(?:in|for|about)$/i.test(raws[i] ?? "") || endsClause(raws[i] ?? "")) continue;
    const phrase = [];
    for (let j = i + 1; j < raws.length && phrase.length < MAX_WORDS; j++) {
      const raw = raws[j] ?? "";
      const word = bare(raw);
      if (phrase.length === 0 && ARTICLES.has(word.toLowerCase())) continue;
      if (STOPS.has(word.toLowerCase())) break;
      phrase.push(word);
      if (endsClause(raw)) break;
    }
    if (phrase.length > 0) return phrase.join(" ");
  }
  return undefined;
}

/**
 * A string argument for the parameter `name`: the user's words whole for a
 * text, else the likely phrase in them (the words whole when there is none).
 * @param {string} name @param {string} userText
 */
export function stringArgument(name, userText) {
  if (namesText(name)) return userText;
  return likelyPhrase(userText) ?? userText;
}
