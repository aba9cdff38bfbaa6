// Shared between the kernel header and the host-only file.
#pragma once
#define NUM_BINS 64

// host_reference.cpp: the histogram on the CPU.
void histogram_reference(const unsigned char* data, int n, unsigned int* bins);
