#!/usr/bin/env bash
# Recompute the official reference outputs of the Chronicles-OCR parity tests.
#
#   tests/chronicles/make_reference.sh OFFICIAL_CHECKOUT [PYTHON]
#
# OFFICIAL_CHECKOUT: a checkout of github.com/VirtualLUOUCAS/Chronicles-OCR (the folder
# holding Opensource/), commit 23a37c6 for the stored fixtures. PYTHON: an interpreter
# with the official requirements minus openai/vllm (tqdm Pillow rapidfuzz pandas openpyxl);
# default python3. Run from anywhere; writes only under tests/chronicles/fixtures/official.
# Not run in CI.
set -euo pipefail

OFFICIAL="$(cd "${1:?usage: make_reference.sh OFFICIAL_CHECKOUT [PYTHON]}" && pwd)"
PY="${2:-python3}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
DEMO="$REPO/plugins/chronicles-ocr/src/chronicles_ocr/demo/Chronicles_OCR.jsonl"
PRED="$HERE/fixtures/predictions"
DEST="$HERE/fixtures/official"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export PYTHONHASHSEED=0

echo "official commit: $(git -C "$OFFICIAL" rev-parse --short HEAD 2>/dev/null || echo unknown)"

# 1. the probes are what infer.py would have written (extraction, recognition targets)
"$PY" "$HERE/check_probes.py" "$OFFICIAL"

# 2. the official judge, then the official summary (unmodified scripts)
"$PY" "$OFFICIAL/Opensource/judge.py" --data_file "$DEMO" --infer_dir "$PRED" \
    --output_dir "$WORK/judge_results" --max_workers 1 > "$WORK/judge.log" 2>&1
"$PY" "$OFFICIAL/Opensource/summarize.py" --input_dir "$WORK/judge_results" \
    --output "$WORK/results_analysis.xlsx" > "$WORK/summarize.log" 2>&1

# 3. store: judge lines byte for byte (reordered as in the infer file: the official
#    order is thread-completion order), the workbook as JSON
rm -rf "$DEST/judge_results"
for dir in "$WORK"/judge_results/*/; do
    tag="$(basename "$dir")"
    mkdir -p "$DEST/judge_results/$tag"
    "$PY" - "$PRED/$tag/results.jsonl" "$dir/results.jsonl" \
        "$DEST/judge_results/$tag/results.jsonl" <<'EOF'
import json, sys
infer, judged, out = sys.argv[1:]
order = [json.loads(l)["image_path"] for l in open(infer, encoding="utf-8") if l.strip()]
lines = [l for l in open(judged, encoding="utf-8") if l.strip()]
lines.sort(key=lambda l: order.index(json.loads(l)["image_path"]))
open(out, "w", encoding="utf-8").write("".join(lines))
EOF
done
"$PY" "$HERE/read_workbook.py" "$WORK/results_analysis.xlsx" > "$DEST/summary.json"
grep -E "total=" "$WORK/judge.log" | sed 's/^ *//' > "$DEST/judge_counts.txt"
echo "wrote $DEST"
