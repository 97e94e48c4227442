#!/usr/bin/env bash
# GPU check of the hf: backend (issue 9): a random LLaVA-1.5-7B-sized model built from its
# config (no download), the hf: harness on 256 Ancient-Bench demo requests vs a bare batched
# model.generate loop on the same inputs; prints the throughput ratio (goal >= 80 %) and the
# peak GPU memory, and writes $OUT/gpu_check.json when $OUT is set. Under 5 minutes on one
# H200. Nothing depends on it: the test suite never runs it.
#
#   scripts/gpu_check.sh                 # on the GPU machine
#   scripts/gpu_check.sh --tiny          # CPU smoke test with the tiny test model (~1 min)
#   scripts/gpu_check.sh --samples 128 --batch-size 16 --tokens 32 --layers 16
#
# Python: $PYTHON, else .venv/bin/python when present, else python3. The source tree is put
# on PYTHONPATH, so the package need not be installed; torch, transformers, tokenizers,
# safetensors, Pillow, pydantic and tqdm must be importable. Offline (HF_HUB_OFFLINE=1).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${PYTHON:-}" ]; then PY="$PYTHON"
elif [ -x .venv/bin/python ]; then PY=.venv/bin/python
else PY=python3; fi
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
missing=$("$PY" - <<'PYEOF'
import importlib.util
need = ["torch", "transformers", "tokenizers", "safetensors", "PIL", "pydantic", "tqdm"]
print(" ".join(m for m in need if importlib.util.find_spec(m) is None))
PYEOF
)
if [ -n "$missing" ]; then
  echo "gpu_check: missing Python packages for $PY: $missing" >&2
  exit 2
fi
"$PY" -c "import torch; print('python', __import__('sys').version.split()[0], '| cuda', torch.version.cuda, '| devices', torch.cuda.device_count())"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv,noheader || true
exec timeout "${GPU_CHECK_TIMEOUT_S:-290}" "$PY" scripts/gpu_check.py "$@"
