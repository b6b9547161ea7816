// streamcheck-expect: clean
//
// graph_conditional_racy with the hand-off: s3 waits for an event recorded
// on s1 after both launches before it frees the buffers the bodies read.
#include "graph_conditional.cuh"

int main() { return cond::run("graph_conditional_ok", true); }
