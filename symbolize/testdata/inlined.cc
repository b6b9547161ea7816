// A helper inlined into main: the symbolizer must report both the helper's
// line and the line in main that called it.
#include <cstdio>

__attribute__((noinline)) void sink(void) {
	std::printf("%p %p\n", __builtin_return_address(0), (void *)&sink);
}

namespace app {
static inline __attribute__((always_inline)) void helper(void) {
	sink();  // line 11
}
}  // namespace app

int main() {
	app::helper();  // line 16
	return 0;
}
