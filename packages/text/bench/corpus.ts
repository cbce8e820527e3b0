// The fixed corpus of the tokenizer comparison: hand-written samples of the text a chat server sees
// (prose, code, JSON, markdown, many scripts, emoji sequences, odd whitespace, chat-template markup) plus
// seeded random strings drawn from the same character classes. Deterministic: same seed, same corpus.

/** xorshift32: small, seedable, identical on every platform. */
export function rng(seed: number): () => number {
  let x = seed >>> 0 || 0x9e3779b9;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x1_0000_0000;
  };
}

const SAMPLES: readonly string[] = [
  "The quick brown fox jumps over the lazy dog. It's 5 o'clock somewhere; DON'T PANIC, we'll see.",
  "In 1969, Apollo 11 landed on the Moon — 384,400 km away — after a 4-day, 3-hour flight.\n\nNext paragraph.",
  "def fib(n: int) -> int:\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n\nprint([fib(i) for i in range(10)])\n",
  "export function sum(xs: readonly number[]): number {\n\treturn xs.reduce((a, b) => a + b, 0);\n}\nconst s = `x=$" +
    "{sum([1, 2])}`;\n",
  '{"model": "qwen3", "messages": [{"role": "user", "content": "Hi!"}], "temperature": 0.7, "top_p": 0.95}',
  "# Title\n\n- item one\n- item **two** with `code`\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n> quote\n",
  "人工智能是计算机科学的一个分支，它企图了解智能的实质，并生产出一种新的能以人类智能相似的方式做出反应的智能机器。",
  "東京は日本の首都です。ひらがな、カタカナ、漢字が混ざっています。ｶﾀｶﾅ（半角）も。",
  "안녕하세요! 한국어 문장입니다. 오늘 날씨가 좋네요.",
  "Съешь же ещё этих мягких французских булок, да выпей чаю.",
  "مرحبا بالعالم! هذه جملة باللغة العربية.",
  "नमस्ते दुनिया। यह हिंदी में एक वाक्य है।",
  "Ελληνικά: Ξεσκεπάζω την ψυχοφθόρα βδελυγμία. עברית: שלום עולם. ไทย: สวัสดีชาวโลก",
  "Emoji: 😀😃😄 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🇯🇵 ❤️ ✨🎉 — and a kaomoji (╯°□°）╯︵ ┻━┻",
  "Math: ∀x∈ℝ, x² ≥ 0; ∑_{i=1}^{n} i = n(n+1)/2; π ≈ 3.14159; ∞ ≠ ∅.",
  "Combining: e\u0301 vs é, n\u0303, A\u030a, \u1e9b\u0323 — normalization matters (NFC).",
  "Whitespace:   three spaces,\ttab,\r\nCRLF,\n\n\ntriple newline,   trailing   \n \u00a0nbsp\u2003em-space",
  "Numbers: 0 1 12 123 1234 12345 123456 3.14159265358979 -42 1e-9 0x1F 1_000_000 2024-06-30T12:34:56Z",
  "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n",
  "Partial markup <|im_st and <|endoftext|> and <think>\nreasoning\n</think>\n\nanswer <tool_call>{}</tool_call>",
  "URLs: https://example.com/path?query=a&b=c#frag mailto:someone@example.org ./relative/../path.txt",
  "Contractions: I'M, YOU'RE, they've, she'd, it'll, 'TIS, rock 'n' roll, O'Neil's",
  "Mixed: English中文日本語한국어русскийالعربية हिन्दी 😀 done.",
  "Zero-width: a\u200bb\u200cc\u200dd\ufeffe — soft\u00adhyphen — bidi \u202eevil\u202c",
  "Long word: pneumonoultramicroscopicsilicovolcanoconiosis supercalifragilisticexpialidocious",
  `Repeated: ${"ha".repeat(64)} ${"=".repeat(80)} ${"\u4e00".repeat(40)}`,
  "SQL: SELECT id, name FROM users WHERE created_at > NOW() - INTERVAL '7 days' ORDER BY id DESC LIMIT 10;",
  'Rust: fn main() { let v: Vec<u32> = (0..10).map(|x| x * x).collect(); println!("{:?}", v); }',
  "HTML: <div class=\"a\">&lt;b&gt; &amp; &nbsp;</div><script>alert('x')</script>",
  "Latin-1: àáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿ ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖØÙÚÛÜÝÞß ¡¿«»§¶©®™°±",
];

/** Character classes for the random strings, weighted towards what chat traffic contains. */
const CLASSES: readonly { weight: number; chars: string }[] = [
  { weight: 30, chars: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" },
  { weight: 14, chars: "   \n" },
  { weight: 4, chars: "0123456789" },
  { weight: 5, chars: ".,;:!?'\"()[]{}<>-_=+*/\\|@#$%^&~`" },
  { weight: 2, chars: "\t\r\u00a0\u3000" },
  { weight: 8, chars: "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年" },
  { weight: 3, chars: "あいうえおかきくけこアイウエオカキクケコ" },
  { weight: 3, chars: "абвгдеёжзийклмнопрстуфхцчшщъыьэюя" },
  { weight: 2, chars: "αβγδεζηθικλμνξοπρστυφχψω" },
  { weight: 2, chars: "ابتثجحخدذرزسشصضطظعغفقكلمنهوي" },
  { weight: 2, chars: "àéîõüçñßøåæ" },
  { weight: 1, chars: "\u0301\u0308\u0303" },
];
const EMOJI = ["😀", "👍🏽", "👨‍👩‍👧", "🎉", "❤️", "🇫🇷", "🧪", "🐍", "🚀", "🤖"];
const WORDS = ["the", "of", "and", "to", "in", "is", "you", "that", "it", "he", "token", "stream", "vLLM"];

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)]!;
}

function randomString(r: () => number, length: number): string {
  const total = CLASSES.reduce((s, c) => s + c.weight, 0);
  const chars = (c: string) => Array.from(c);
  let out = "";
  while (out.length < length) {
    const roll = r();
    if (roll < 0.04) {
      out += pick(r, EMOJI);
      continue;
    }
    if (roll < 0.2) {
      out += `${pick(r, WORDS)} `;
      continue;
    }
    let w = r() * total;
    let cls = CLASSES[0]!;
    for (const c of CLASSES) {
      w -= c.weight;
      if (w < 0) {
        cls = c;
        break;
      }
    }
    out += pick(r, chars(cls.chars));
  }
  return out;
}

/** Hand-written samples (each repeated with variations) followed by `randomCount` seeded random strings. */
export function buildCorpus(seed = 20_240_601, randomCount = 1500): string[] {
  const r = rng(seed);
  const corpus: string[] = [];
  for (const sample of SAMPLES) {
    corpus.push(sample, ` ${sample}`, `${sample}\n`, sample.toUpperCase());
  }
  for (let i = 0; i < randomCount; i++) corpus.push(randomString(r, 20 + Math.floor(r() * 400)));
  return corpus;
}

/** One long document of about `chars` characters made of corpus samples (for the long-prompt timing). */
export function longDocument(chars: number, seed = 7): string {
  const r = rng(seed);
  const parts: string[] = [];
  let length = 0;
  while (length < chars) {
    const part = r() < 0.5 ? pick(r, SAMPLES) : randomString(r, 200);
    parts.push(part);
    length += part.length + 2;
  }
  return parts.join("\n\n");
}
