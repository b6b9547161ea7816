// streamcheck-expect: clean
//
// As entry_points_racy.cu, but s2 waits for an event recorded on s1 after the
// ten allocations before using them through the ten entry points.
#include "entry_points.cuh"

int main() { return ep::run("entry_points_ok", true); }
