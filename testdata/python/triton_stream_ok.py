# streamcheck-expect: clean
# streamcheck-allow: leak
#
# As triton_stream_racy.py, but s2 waits for s1 (s2.wait_stream(s1)) before
# the Triton kernel reads the input, and x.record_stream(s2) keeps its memory
# from being reused before s2 is done with it.
import sys

from triton_stream_racy import run

if __name__ == "__main__":
    sys.exit(run(handoff=True))
