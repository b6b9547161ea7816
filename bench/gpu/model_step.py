# model_step.py: the training step of a real model, for bench/gpu-backends.sh:
# torchvision's ResNet-18 (no weights downloaded: weights=None), bf16 autocast,
# SGD, batch 64 of 224x224 random images; or, with MODEL=gpt2 or without
# torchvision, a 6-layer GPT-2 built from transformers' GPT2Config (no
# download), batch 8 of 512 tokens. PyTorch's cudaMallocAsync backend is
# the caller's choice (PYTORCH_CUDA_ALLOC_CONF). Prints "bench: X ms per step"
# over STEPS timed steps (argv[1], default 30) after a warm-up.
import os
import sys
import time

import torch


def resnet_step(dev):
    import torchvision

    model = torchvision.models.resnet18(weights=None).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(64, 3, 224, 224, device=dev)
    y = torch.randint(0, 1000, (64,), device=dev)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    return "resnet18", step


def gpt2_step(dev):
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(n_layer=6, n_head=12, n_embd=768, n_positions=512)
    model = GPT2LMHeadModel(cfg).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, cfg.vocab_size, (8, 512), device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(ids, labels=ids).loss
        loss.backward()
        opt.step()

    return "gpt2", step


def main() -> int:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    dev = torch.device("cuda", 0)
    torch.manual_seed(0)
    want = os.environ.get("MODEL", "resnet18")
    try:
        name, step = gpt2_step(dev) if want == "gpt2" else resnet_step(dev)
    except ImportError:
        name, step = gpt2_step(dev)
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    ms = (time.perf_counter() - t0) * 1e3 / steps
    print(f"bench: {ms:.3f} ms per step ({name}, {steps} steps)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
