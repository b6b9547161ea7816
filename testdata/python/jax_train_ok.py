# streamcheck-expect: clean
# streamcheck-allow: leak
#
# A jit-compiled MLP training loop in JAX with the stream-ordered allocator
# (XLA_PYTHON_CLIENT_ALLOCATOR=cuda_async): parameters updated each step, the
# loss fetched to the host every few steps. XLA frees buffers on its compute
# stream once a host function on its transfer stream has told the host that
# the device-to-host copies finished: correct code that must stay clean.
import sys

import jax
import jax.numpy as jnp
import numpy as np


def init(key, sizes):
    params = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        key, k = jax.random.split(key)
        params.append((jax.random.normal(k, (a, b)) * (1.0 / np.sqrt(a)), jnp.zeros((b,))))
    return params


def loss_fn(params, x, y):
    h = x
    for w, b in params[:-1]:
        h = jax.nn.relu(h @ w + b)
    w, b = params[-1]
    return jnp.mean((h @ w + b - y) ** 2)


@jax.jit
def step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    return [(w - 0.05 * gw, b - 0.05 * gb) for (w, b), (gw, gb) in zip(params, grads)], loss


def main() -> int:
    if jax.default_backend() != "gpu":
        print("no GPU backend", file=sys.stderr)
        return 1
    key = jax.random.PRNGKey(0)
    params = init(key, [256, 512, 512, 10])
    # Loss on one fixed batch before and after: the training must work.
    x0 = jax.random.normal(jax.random.PRNGKey(1), (512, 256))
    y0 = jnp.sin(x0[:, :10])
    before = float(loss_fn(params, x0, y0))
    losses = []
    for i in range(60):
        key, kx = jax.random.split(key)
        x = jax.random.normal(kx, (128, 256))
        y = jnp.sin(x[:, :10])
        params, loss = step(params, x, y)
        if i % 10 == 9:
            losses.append(float(loss))  # a device-to-host transfer
    after = float(loss_fn(params, x0, y0))
    print("losses", ["%.4f" % l for l in losses], "held-out %.4f -> %.4f" % (before, after))
    return 0 if after < before else 1


if __name__ == "__main__":
    sys.exit(main())
