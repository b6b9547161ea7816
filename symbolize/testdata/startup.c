/* With -O2, gcc puts main in .text.startup: a second line-table sequence. */
#include <stdio.h>
__attribute__((noinline)) int f(int x) { printf("%d\n", x); return x+1; }
int main(int argc, char **argv) {
  int r = f(argc);
  return r;
}
