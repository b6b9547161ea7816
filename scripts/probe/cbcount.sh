#!/usr/bin/env bash
# cbcount.sh OUT.so — builds the CUPTI probe (cbcount.c beside this file)
# against the GPU machine's CUDA (CUDA, default /usr/local/cuda).
set -u
CU=${CUDA:-/usr/local/cuda}
exec gcc -shared -fPIC -O2 -I"$CU/include" -I"$CU/extras/CUPTI/include" "$(dirname "$0")/cbcount.c" -o "$1" \
    -L"$CU/lib64" -L"$CU/extras/CUPTI/lib64" -lcupti -Wl,-rpath,"$CU/lib64:$CU/extras/CUPTI/lib64"
