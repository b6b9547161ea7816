# streamcheck-expect: clean
# streamcheck-allow: leak
#
# A timm ViT (vit_tiny_patch16_224, pretrained=False: nothing downloaded),
# three forward/backward steps with AdamW, under the cudaMallocAsync
# allocator backend. Nothing in it is wrong.
import gc
import os
import sys

os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "backend:cudaMallocAsync")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import timm  # noqa: E402
import torch  # noqa: E402


def main() -> int:
    torch.manual_seed(0)
    dev = torch.device("cuda", 0)
    model = timm.create_model("vit_tiny_patch16_224", pretrained=False, num_classes=10).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()
    losses = []
    for _ in range(3):
        x = torch.randn(8, 3, 224, 224, device=dev)
        y = torch.randint(0, 10, (8,), device=dev)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
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
