#!/usr/bin/env bash
# One-off probe of the GPU machine: CUPTI ABI facts and installed layouts.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
{
nvidia-smi -L; nvcc --version | tail -2
ls /usr/local/cuda/extras/CUPTI/include /usr/local/cuda/include/cupti.h 2>&1 | head
CI="-I/usr/local/cuda/include -I/usr/local/cuda/extras/CUPTI/include"
gcc $CI scripts/probe/cupti_abi.c -o /tmp/abi -L/usr/local/cuda/lib64 -L/usr/local/cuda/extras/CUPTI/lib64 -lcupti -Wl,-rpath,/usr/local/cuda/lib64 && /tmp/abi
python3 -c 'import torch, cupy, sys; print(sys.version); print(torch.__version__, torch.__file__, cupy.__version__)'
ls $(python3 -c 'import nvidia,os;print(os.path.dirname(nvidia.__path__[0]))')/nvidia/ 2>&1
find / -name 'libcupti.so*' 2>/dev/null | head
find / -name 'libcudart.so*' 2>/dev/null | head
} > "$OUT/probe.txt" 2>&1
