"""`vllm bench serve` runs, one per line of stdin, in one process (the vs-vllm bench scenario).

Each line is a JSON list of the arguments after `vllm` (["bench", "serve", ...]); they are run by vLLM's own
CLI entry point, `vllm.entrypoints.cli.main.main()`, exactly as `vllm bench serve ...` runs them. Only the
CLI's start-up (importing vLLM and torch: ~15 s of CPU) is paid once instead of once per run. After each
run the line `vs-vllm-bench-loop: done <exit code>` is printed. Run with the Python of a vLLM environment.
"""

import json
import sys
import traceback

from vllm.entrypoints.cli.main import main

DONE = "vs-vllm-bench-loop: done"

print("vs-vllm-bench-loop: ready", flush=True)
for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    sys.argv = ["vllm", *json.loads(line)]
    code = 0
    try:
        main()
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    except Exception:  # noqa: BLE001 - reported, and the next run still gets its turn
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    print(f"{DONE} {code}", flush=True)
