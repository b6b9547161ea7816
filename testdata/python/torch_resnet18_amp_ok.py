# streamcheck-expect: clean
# streamcheck-allow: leak
#
# torchvision ResNet-18 (weights=None: built locally, nothing downloaded),
# four training steps with automatic mixed precision (torch.autocast to
# float16 and torch.amp.GradScaler) and SGD with momentum, channels_last,
# under the cudaMallocAsync allocator backend. Nothing in it is wrong.
import gc
import os
import sys

os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "backend:cudaMallocAsync")

import torch  # noqa: E402
import torchvision  # noqa: E402


def main() -> int:
    torch.manual_seed(0)
    dev = torch.device("cuda", 0)
    model = torchvision.models.resnet18(weights=None, num_classes=10).to(dev)
    model = model.to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda")
    loss_fn = torch.nn.CrossEntropyLoss()
    losses = []
    for _ in range(4):
        x = torch.randn(16, 3, 128, 128, device=dev).to(memory_format=torch.channels_last)
        y = torch.randint(0, 10, (16,), device=dev)
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(float(loss.item()))
    print("STREAMCHECK_NOTE losses " + " ".join(f"{v:.4f}" for v in losses))
    torch.cuda.synchronize()
    del model, opt
    gc.collect()
    torch.cuda.synchronize()
    print("STREAMCHECK_DONE")
    return 0


if __name__ == "__main__":
    sys.exit(main())
