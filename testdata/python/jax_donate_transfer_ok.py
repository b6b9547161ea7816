# streamcheck-expect: clean
# streamcheck-allow: leak
#
# Buffer donation (donate_argnums) plus device-to-host transfers in flight:
# each step's state is donated to the next, copies to the host are started
# with copy_to_host_async and read later, and arrays are dropped as soon as
# the host has them. XLA frees donated and dropped buffers on its compute
# stream after its transfer stream's host function reported the copies done.
import sys

import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def _update(state, x):
    return state * 0.99 + jnp.tanh(x @ state)


update = jax.jit(_update, donate_argnums=(0,))


def main() -> int:
    if jax.default_backend() != "gpu":
        print("no GPU backend", file=sys.stderr)
        return 1
    state = jnp.eye(512)
    pending = []
    checksum = 0.0
    for i in range(40):
        x = jax.random.normal(jax.random.PRNGKey(i), (512, 512)) * 0.01
        state = update(state, x)
        snap = state + 0.0
        snap.copy_to_host_async()
        pending.append(snap)
        del x
        if len(pending) > 3:
            checksum += float(np.asarray(pending.pop(0)).sum())
    while pending:
        checksum += float(np.asarray(pending.pop(0)).sum())
    print("checksum %.3f" % checksum)
    return 0


if __name__ == "__main__":
    sys.exit(main())
