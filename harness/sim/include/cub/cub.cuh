#pragma once
#error "cudasim: CUB is not available on the CPU simulator; the puzzles ask you to write the collective yourself. CUB is used as the GPU baseline in benchmarks only."
