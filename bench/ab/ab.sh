#!/usr/bin/env bash
# A/B runs of clt-bench under experiment switches, for a GPU call (see ../shared/device/README.md).
# usage: bash bench/ab/ab.sh SPEC OUTDIR. Each SPEC line: label|VAR=value;VAR=value ...|clt-bench arguments
# (blank lines and lines starting with # are skipped; a label ending in _trace adds the profiler's
# trace and bench/tools/trace_summary.py's per-kernel table, OUTDIR/<label>.trace.md). Writes OUTDIR/<label>.jsonl, .log and
# OUTDIR/ab.md: one row per (label, case) with the median time in us.
set -u
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
spec="$1" out="$2"
mkdir -p "$out"
while IFS='|' read -r label vars args; do
    case "$label" in ''|'#'*) continue ;; esac
    IFS=';' read -ra assign <<< "$vars"
    # shellcheck disable=SC2086 # word splitting of the arguments is intended
    # A label ending in _trace also records the profiler's trace and its per-kernel summary.
    trace=()
    case "$label" in *_trace) trace=(--split --trace "$out/$label.trace.json") ;; esac
    env "${assign[@]}" timeout "${AB_CAP:-300}" "$top/build/clt-bench" $args "${trace[@]}" \
        --json "$out/$label.jsonl" > "$out/$label.log" 2>&1
    echo "$label rc=$?"
    [ ${#trace[@]} -eq 0 ] || python3 "$top/bench/tools/trace_summary.py" "$out/$label.trace.json" \
        > "$out/$label.trace.md" 2>&1
done < "$spec"
{
    echo "| label | case | us |"
    echo "| --- | --- | ---: |"
    for f in "$out"/*.jsonl; do
        label=$(basename "$f" .jsonl)
        sed -n 's/.*"case":"\([^"]*\)".*"us":\([0-9.]*\).*/\1 \2/p' "$f" |
            while read -r c us; do echo "| $label | $c | $us |"; done
    done
} > "$out/ab.md"
cat "$out/ab.md"
