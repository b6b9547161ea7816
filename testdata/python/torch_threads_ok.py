# streamcheck-expect: clean
# streamcheck-allow: leak
#
# Four host threads, each on its own stream under the cudaMallocAsync
# backend: each allocates, computes, reads its result back (which
# synchronizes its stream) and frees, while the others do the same. Each
# tensor lives and dies on one stream, so nothing in it is wrong; it checks
# the recorder and the analyzer with concurrent host threads in a real
# program.
import gc
import sys
import threading

import torch


def worker(idx: int, dev: torch.device, out: list) -> None:
    s = torch.cuda.Stream(device=dev)
    total = 0.0
    with torch.cuda.stream(s):
        for step in range(20):
            a = torch.full((512, 512), float(idx + 1), device=dev)
            b = torch.mm(a, a) / 512.0
            total += float(b[0, 0].item())
            del a, b
    s.synchronize()
    out[idx] = total


def main() -> int:
    dev = torch.device("cuda", 0)
    torch.cuda.init()
    out = [0.0] * 4
    threads = [threading.Thread(target=worker, args=(i, dev, out)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("STREAMCHECK_NOTE totals " + " ".join(f"{v:.0f}" for v in out))
    torch.cuda.synchronize()
    gc.collect()
    print("STREAMCHECK_DONE")
    return 0


if __name__ == "__main__":
    sys.exit(main())
