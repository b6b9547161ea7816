# streamcheck-expect: clean
# streamcheck-allow: leak
#
# lax.scan over a stack of convolutions under jit, run several times, with the
# result brought back to the host: XLA's temporaries and outputs are allocated
# and freed by the stream-ordered allocator (cuda_async).
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax


def layer(x, w):
    y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return jax.nn.relu(y), jnp.mean(y)


@jax.jit
def net(x, ws):
    return lax.scan(layer, x, ws)


def main() -> int:
    if jax.default_backend() != "gpu":
        print("no GPU backend", file=sys.stderr)
        return 1
    key = jax.random.PRNGKey(1)
    ws = jax.random.normal(key, (8, 3, 3, 32, 32)) * 0.05
    total = 0.0
    for i in range(10):
        x = jax.random.normal(jax.random.PRNGKey(i), (8, 64, 64, 32))
        out, means = net(x, ws)
        total += float(np.asarray(means).sum()) + float(jnp.sum(out))
    print("total %.4f" % total)
    return 0


if __name__ == "__main__":
    sys.exit(main())
