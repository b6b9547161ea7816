# lib.sh: what the benchmark scripts share; sourced from the repository
# root (gpu-lib.sh sources it for the GPU-machine scripts).

# median: the median of the numbers on stdin, one per line.
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# interleave ROUNDS RUN: ROUNDS rounds, each running every entry
# "name|shim|setting" of the array configs in turn as RUN SHIM [SETTING],
# the output of entry i appended to $work/c$i.
interleave() {
	local rounds=$1 run=$2 r i name shim setting
	for ((r = 0; r < rounds; r++)); do
		for i in "${!configs[@]}"; do
			IFS='|' read -r name shim setting <<<"${configs[$i]}"
			# shellcheck disable=SC2086 # the setting is zero or one word
			"$run" "$shim" $setting >>"$work/c$i"
		done
	done
}
