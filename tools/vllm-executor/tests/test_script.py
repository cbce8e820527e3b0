"""Script resolution and token choice (pure Python; no vLLM needed)."""

import json
import os
import tempfile
import unittest

from vllm_model_free.script import (
    Script,
    ScriptError,
    TokenChooser,
    deterministic_token,
    load_rules,
    prompt_seed,
    resolve_script,
)

VOCAB = 151936


class ResolveScriptTest(unittest.TestCase):
    def test_extra_args_win_over_rules(self):
        rules = [load_rules_from({"rules": [{"prompt_contains": [5, 6], "output": [9]}]})[0]]
        script = resolve_script({"scripted_token_ids": [1, 2], "scripted_end": "eos"}, [5, 6], rules, "continue", VOCAB)
        self.assertEqual(script, Script((1, 2), "eos"))

    def test_rule_matches_a_contiguous_subsequence_only(self):
        rules = load_rules_from({"rules": [{"prompt_contains": [5, 6], "output": [9], "end": "eos"}]})
        self.assertEqual(resolve_script(None, [1, 5, 6, 2], rules, "continue", VOCAB), Script((9,), "eos"))
        self.assertIsNone(resolve_script(None, [5, 1, 6], rules, "continue", VOCAB))

    def test_first_matching_rule_wins_and_default_end_applies(self):
        rules = load_rules_from({"rules": [{"prompt_contains": [7], "output": [1]}, {"prompt_contains": [7], "output": [2]}]})
        self.assertEqual(resolve_script({}, [7], rules, "eos", VOCAB), Script((1,), "eos"))

    def test_malformed_scripts_are_rejected_with_the_field_named(self):
        with self.assertRaisesRegex(ScriptError, "scripted_token_ids"):
            resolve_script({"scripted_token_ids": "1,2"}, [1], [], "continue", VOCAB)
        with self.assertRaisesRegex(ScriptError, "outside the vocabulary"):
            resolve_script({"scripted_token_ids": [VOCAB]}, [1], [], "continue", VOCAB)
        with self.assertRaisesRegex(ScriptError, "scripted_end"):
            resolve_script({"scripted_token_ids": [1], "scripted_end": "stop"}, [1], [], "continue", VOCAB)
        with self.assertRaisesRegex(ScriptError, "prompt_contains must not be empty"):
            load_rules_from({"rules": [{"prompt_contains": [], "output": [1]}]})


class TextScriptTest(unittest.TestCase):
    # A toy tokenizer: one id per character.
    encode = staticmethod(lambda text: [ord(c) for c in text])
    decode = staticmethod(lambda ids: "".join(chr(i) for i in ids))

    def test_text_rules_match_the_decoded_prompt_and_encode_their_output(self):
        rules = load_rules_from({"rules": [{"prompt_contains_text": "weather", "output_text": "ok"}]}, self.encode)
        prompt = self.encode("what is the weather?")
        self.assertEqual(resolve_script(None, prompt, rules, "eos", VOCAB, self.encode, self.decode), Script((111, 107), "eos"))
        self.assertIsNone(resolve_script(None, self.encode("hi"), rules, "eos", VOCAB, self.encode, self.decode))

    def test_scripted_text_in_extra_args(self):
        script = resolve_script({"scripted_text": "ab"}, [1], [], "continue", VOCAB, self.encode, self.decode)
        self.assertEqual(script, Script((97, 98), "continue"))

    def test_text_without_a_tokenizer_is_an_error_that_says_so(self):
        with self.assertRaisesRegex(ScriptError, "tokenizer"):
            load_rules_from({"rules": [{"prompt_contains": [1], "output_text": "x"}]})
        with self.assertRaisesRegex(ScriptError, "exactly one of prompt_contains"):
            load_rules_from({"rules": [{"prompt_contains": [1], "prompt_contains_text": "x", "output": [1]}]})


class TokenChooserTest(unittest.TestCase):
    def test_script_then_deterministic_continuation(self):
        seed = prompt_seed([1, 2, 3])
        chooser = TokenChooser(Script((10, 11), "continue"), seed, VOCAB, 151645, 0, [])
        self.assertEqual([chooser.token(i) for i in range(2)], [10, 11])
        self.assertEqual(chooser.token(2), deterministic_token(seed, 2, VOCAB))

    def test_script_then_eos(self):
        chooser = TokenChooser(Script((10,), "eos"), 0, VOCAB, 151645, 0, [])
        self.assertEqual(chooser.token(1), 151645)

    def test_same_prompt_same_ids_other_prompt_other_ids(self):
        a = [deterministic_token(prompt_seed([1, 2, 3]), i, VOCAB) for i in range(8)]
        b = [deterministic_token(prompt_seed([1, 2, 3]), i, VOCAB) for i in range(8)]
        c = [deterministic_token(prompt_seed([3, 2, 1]), i, VOCAB) for i in range(8)]
        self.assertEqual(a, b)
        self.assertNotEqual(a, c)
        self.assertTrue(all(1000 <= t < 151643 for t in a + c))

    def test_min_tokens_masks_stop_and_eos_ids_before_the_minimum(self):
        chooser = TokenChooser(Script((500, 151645, 7, 500), "continue"), 3, VOCAB, 151645, 2, [500])
        self.assertNotIn(chooser.token(0), (500, 151645))
        self.assertNotIn(chooser.token(1), (500, 151645))
        self.assertEqual(chooser.token(2), 7)
        self.assertEqual(chooser.token(3), 500)


def load_rules_from(data, encode=None):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(data, f)
    try:
        return load_rules(f.name, VOCAB, encode)
    finally:
        os.unlink(f.name)


if __name__ == "__main__":
    unittest.main()
