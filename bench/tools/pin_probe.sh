#!/usr/bin/env bash
# Launch-bound cases under different CPU pinnings (the H200 machine's micro add cases varied 5-8 us
# between processes): topology, then clt-bench --case /1024 unpinned and per core set.
cd "$(dirname "$0")/../.."
out=$1; mkdir -p "$out"
{ nvidia-smi topo -m; lscpu | grep -iE "^CPU\(s\)|NUMA|Model name|Thread|Socket"; } > "$out/topo.txt" 2>&1
for set in none none 0 0-3 4-7 8-11 12-15 0-15; do
    pre=(); [ "$set" = none ] || pre=(taskset -c "$set")
    "${pre[@]}" build/clt-bench --suite micro --case /1024 --json "$out/pin_$set.jsonl" > /dev/null 2>&1
    echo "$set: $(sed -n 's/.*"case":"\([^"]*\)".*"us":\([0-9.]*\).*/\1=\2/p' "$out/pin_$set.jsonl" | tr '\n' ' ')"
done | tee "$out/pin.txt"
