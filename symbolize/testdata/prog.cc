// A C++ function, to check that names come back demangled.
namespace app {
int scale(int x) {
	return x * 2;
}
}  // namespace app

int main() { return app::scale(1) == 2 ? 0 : 1; }
