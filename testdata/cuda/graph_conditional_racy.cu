// streamcheck-expect: free-while-in-flight
// streamcheck-expect-count: 2
//
// Two graphs hold a conditional node whose body reads a buffer: one built
// by hand, one given the node during its capture (NVIDIA NeMo's pattern).
// Both are launched on s1, and s3 frees both buffers without waiting for
// the launches: each free races with a body (see graph_conditional.cuh).
#include "graph_conditional.cuh"

int main() { return cond::run("graph_conditional_racy", false); }
