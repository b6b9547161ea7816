# gpu-lib.sh: what the GPU-machine benchmark scripts share; sourced by
# gpu-overhead.sh and gpu-shim-ab.sh from the repository root.

# pin_shell: pins this shell, and so every run it starts, to the CPUs in
# $PIN (PIN="" to not pin). Native runs on the GPU machine came in two modes
# (about 12.5 and 16.5 us per iteration of the loop), likely from where the
# scheduler put the process; the same cores keep configurations comparable.
# Clears PIN when pinning is not possible, so reports can say so.
pin_shell() {
	if [ -n "$PIN" ] && command -v taskset >/dev/null; then
		taskset -pc "$PIN" $$ >/dev/null || PIN=""
	else
		PIN=""
	fi
}

# per_iter: the loop's "bench: N us per iteration" figure from its output.
per_iter() { sed -n 's/^bench: \([0-9.]*\) us per iteration.*/\1/p'; }
. bench/lib.sh # median
# median_ratio "a1 a2 ..." "b1 b2 ...": the median of the per-round ratios a/b.
median_ratio() {
	local -a a b
	read -ra a <<<"$1"
	read -ra b <<<"$2"
	for r in $(seq 0 $((${#a[@]} - 1))); do awk -v a="${a[$r]}" -v b="${b[$r]}" 'BEGIN { if (b > 0) print a / b }'; done | median
}
