"""Options from the environment and the JSON options file (pure Python; no vLLM needed)."""

import json
import os
import tempfile
import unittest

from vllm_model_free.options import OptionsError, load_options


class LoadOptionsTest(unittest.TestCase):
    def test_defaults(self):
        o = load_options({})
        self.assertEqual((o.kv_cache_bytes, o.step_ms, o.fail_at_step, o.script_end), (64 * 1024 * 1024, 0.0, 0, "continue"))
        self.assertEqual(o.forward_seconds(100), 0.0)

    def test_environment_overrides_the_file(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"step_ms": 5, "token_us": 10, "fail_at_step": 3}, f)
        try:
            o = load_options({"VLLM_MODEL_FREE_OPTIONS": f.name, "VLLM_MODEL_FREE_STEP_MS": "2"})
        finally:
            os.unlink(f.name)
        self.assertEqual((o.step_ms, o.token_us, o.fail_at_step), (2.0, 10.0, 3))
        self.assertAlmostEqual(o.forward_seconds(100), 0.002 + 0.001)

    def test_bad_values_name_the_option(self):
        with self.assertRaisesRegex(OptionsError, "VLLM_MODEL_FREE_FAIL_AT_STEP"):
            load_options({"VLLM_MODEL_FREE_FAIL_AT_STEP": "three"})
        with self.assertRaisesRegex(OptionsError, "script_end"):
            load_options({"VLLM_MODEL_FREE_SCRIPT_END": "stop"})
        with self.assertRaisesRegex(OptionsError, ">= 0"):
            load_options({"VLLM_MODEL_FREE_STEP_MS": "-1"})

    def test_boolean_options(self):
        self.assertTrue(load_options({"VLLM_MODEL_FREE_LOG_REQUESTS": "1"}).log_requests)
        self.assertFalse(load_options({"VLLM_MODEL_FREE_LOG_REQUESTS": "false"}).log_requests)
        with self.assertRaisesRegex(OptionsError, "LOG_REQUESTS"):
            load_options({"VLLM_MODEL_FREE_LOG_REQUESTS": "maybe"})

    def test_unknown_file_keys_are_rejected(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"step_msec": 5}, f)
        try:
            with self.assertRaisesRegex(OptionsError, "unknown option"):
                load_options({"VLLM_MODEL_FREE_OPTIONS": f.name})
        finally:
            os.unlink(f.name)


if __name__ == "__main__":
    unittest.main()
