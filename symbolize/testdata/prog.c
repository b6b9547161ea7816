/* A tiny program whose symbols and lines the symbolizer test looks up. */
int target(int x) {
	int y = x * 3;
	return y + 1;
}

int main(void) { return target(2) == 7 ? 0 : 1; }
