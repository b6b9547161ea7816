# streamcheck-expect: clean
# streamcheck-allow: leak
#
# A transformers GPT-2 language model built from a GPT2Config (two layers,
# small width; no weights or tokenizer downloaded), four AdamW training steps
# on random token ids under bfloat16 autocast, then a short greedy
# generate(), under the cudaMallocAsync allocator backend. Nothing in it is
# wrong.
import gc
import os
import sys

os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "backend:cudaMallocAsync")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel  # noqa: E402


def main() -> int:
    torch.manual_seed(0)
    dev = torch.device("cuda", 0)
    cfg = GPT2Config(n_layer=2, n_head=4, n_embd=128, n_positions=128, vocab_size=1000)
    model = GPT2LMHeadModel(cfg).to(dev)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(4):
        ids = torch.randint(0, cfg.vocab_size, (8, 64), device=dev)
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(input_ids=ids, labels=ids)
        out.loss.backward()
        opt.step()
        losses.append(float(out.loss.item()))
    print("STREAMCHECK_NOTE losses " + " ".join(f"{v:.4f}" for v in losses))
    model.eval()
    with torch.no_grad():
        prompt = torch.randint(0, cfg.vocab_size, (2, 8), device=dev)
        gen = model.generate(prompt, max_new_tokens=8, do_sample=False, pad_token_id=0)
    print(f"STREAMCHECK_NOTE generated {tuple(gen.shape)}")
    torch.cuda.synchronize()
    del model, opt
    gc.collect()
    torch.cuda.synchronize()
    print("STREAMCHECK_DONE")
    return 0


if __name__ == "__main__":
    sys.exit(main())
