// threadIdx only exists inside kernels. Expected: exit 4, "threadIdx was used outside a kernel".
#include <cstdio>

int main() {
  unsigned t = threadIdx.x;  // the bug
  std::printf("unreachable: threadIdx.x = %u in host code\n", t);
  return 0;
}
