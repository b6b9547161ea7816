#!/usr/bin/env python3
"""corpus-variants.py: write the racy variants of the real-world corpus.

Each variant is a cuda-sample with one statement changed, found by its text,
so that the edit fails loudly (exit 1) if the sample's source changes:

  streamOrderedAllocation_free_early_racy         cudaFreeAsync(d_a) moved before the kernel that reads d_a
  streamOrderedAllocation_free_other_stream_racy  d_a freed on a new non-blocking stream, with no event
  streamOrderedAllocation_copy_other_stream_racy  the copy into d_a issued on a new non-blocking stream
  graphMemoryNodes_no_wait_racy                   the wait on negateKernelCompleteEvent dropped
  graphMemoryNodes_free_early_racy                cudaFreeAsync(d_input) moved before squareArray reads it

Usage: corpus-variants.py SAMPLE.cu VARIANT OUT.cu
       corpus-variants.py --list      (the variants, with the sample each changes)
"""
import pathlib
import sys

SAMPLES = {
    "streamOrderedAllocation_free_early_racy": "streamOrderedAllocation",
    "streamOrderedAllocation_free_other_stream_racy": "streamOrderedAllocation",
    "streamOrderedAllocation_copy_other_stream_racy": "streamOrderedAllocation",
    "graphMemoryNodes_no_wait_racy": "graphMemoryNodes",
    "graphMemoryNodes_free_early_racy": "graphMemoryNodes",
}

# A statement on a stream of its own: a new non-blocking stream that nothing
# orders against the sample's stream.
OTHER_STREAM = ("    {{ cudaStream_t other; checkCudaErrors(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking)); "
                "checkCudaErrors({call}); }}\n")


def find(lines, name, text, after=0):
    for i in range(after, len(lines)):
        if text in lines[i]:
            return i
    sys.exit(f"corpus-variants.py: {name}: no line holds {text!r}")


def move_before(lines, name, statement, anchor):
    """Moves the first line holding statement after anchor to just before it."""
    a = find(lines, name, anchor)
    s = find(lines, name, statement, a)
    lines.insert(a, lines.pop(s))


def edit(lines, name):
    if name == "streamOrderedAllocation_free_early_racy":
        move_before(lines, name, "cudaFreeAsync(d_a, stream)", "vectorAddGPU<<<")
    elif name == "streamOrderedAllocation_free_other_stream_racy":
        i = find(lines, name, "cudaFreeAsync(d_a, stream)")
        lines[i] = OTHER_STREAM.format(call="cudaFreeAsync(d_a, other)")
    elif name == "streamOrderedAllocation_copy_other_stream_racy":
        i = find(lines, name, "cudaMemcpyAsync(d_a, a, bytes, cudaMemcpyHostToDevice, stream)")
        lines[i] = OTHER_STREAM.format(call="cudaMemcpyAsync(d_a, a, bytes, cudaMemcpyHostToDevice, other)")
    elif name == "graphMemoryNodes_no_wait_racy":
        lines.pop(find(lines, name, "cudaStreamWaitEvent(stream2, negateKernelCompleteEvent, 0)"))
    elif name == "graphMemoryNodes_free_early_racy":
        move_before(lines, name, "cudaFreeAsync(d_input, stream1)", "squareArray<<<")
    else:
        sys.exit(f"corpus-variants.py: unknown variant {name!r} (--list names them)")


def main(argv):
    if argv[1:] == ["--list"]:
        for variant, sample in SAMPLES.items():
            print(f"{variant}\t{sample}")
        return
    if len(argv) != 4:
        sys.exit(__doc__.strip().split("\n\n")[-1])
    src, name, out = argv[1:]
    lines = pathlib.Path(src).read_text().splitlines(keepends=True)
    edit(lines, name)
    pathlib.Path(out).write_text("".join(lines))


if __name__ == "__main__":
    main(sys.argv)
