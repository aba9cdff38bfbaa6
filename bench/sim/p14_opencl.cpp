// The OpenCL rows of scripts/bench_sim.py: p14 --complete's algorithm (bench/sim/p14_complete.cl,
// the kernels of solutions/p14/p14.cu in OpenCL C) run by an OpenCL implementation on the CPU,
// PoCL or Oclgrind, with the same launches as scan_any_size: the same work-group size, the same
// number of work-groups per launch, the recursion on the block sums.
//
//   g++ -O2 -std=c++17 bench/sim/p14_opencl.cpp -o p14_opencl -lOpenCL
//   ./p14_opencl --n N --tpb TPB --runs R --platform SUBSTRING [--kernels FILE] [--warmup W]
//   oclgrind [--data-races] ./p14_opencl ... --platform Oclgrind
//
// Prints one JSON line, as p14_loops does: launched work-items (work-groups x TPB summed over
// the launches, as cudasim's --stats counts launched threads), the median seconds of R scans,
// and whether every scan matched a sequential scan. The seconds are the kernels' own time: the
// sum over the launches of END - START from the queue's profiling events
// (CL_QUEUE_PROFILING_ENABLE), leaving out the host's enqueue calls and the gaps between
// launches, as cudasim's kernel_seconds leaves out cudaMalloc. The wall time around
// enqueue..clFinish is printed next to it. Buffers, the program build and W untimed warm-up
// scans come first: PoCL compiles a kernel for its work-group size at the first launch, which is
// no part of running it.
//
// Exit status: 0 all scans correct, 1 a wrong result, 2 usage or OpenCL error, 3 no platform
// whose name contains SUBSTRING (the implementation is not installed).
#define CL_TARGET_OPENCL_VERSION 120  // Oclgrind implements OpenCL 1.2
#include <CL/cl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "scan_input.h"

#ifndef P14_CL_PATH
#define P14_CL_PATH "bench/sim/p14_complete.cl"
#endif

namespace {

void check(cl_int err, const char* what) {
  if (err == CL_SUCCESS) return;
  std::fprintf(stderr, "p14_opencl: %s failed with OpenCL error %d\n", what, err);
  std::exit(2);
}

std::string platform_info(cl_platform_id p, cl_platform_info what) {
  size_t size = 0;
  check(clGetPlatformInfo(p, what, 0, nullptr, &size), "clGetPlatformInfo");
  std::string s(size, '\0');
  check(clGetPlatformInfo(p, what, size, &s[0], nullptr), "clGetPlatformInfo");
  return std::string(s.c_str());  // drop the terminating NUL
}

std::string platform_name(cl_platform_id p) { return platform_info(p, CL_PLATFORM_NAME); }

std::string device_name(cl_device_id d) {
  size_t size = 0;
  check(clGetDeviceInfo(d, CL_DEVICE_NAME, 0, nullptr, &size), "clGetDeviceInfo");
  std::string s(size, '\0');
  check(clGetDeviceInfo(d, CL_DEVICE_NAME, size, &s[0], nullptr), "clGetDeviceInfo");
  return std::string(s.c_str());
}

// The platform whose name contains `want`; the name matters because one ICD loader may offer
// several implementations, and each row must measure the one it names.
cl_platform_id find_platform(const std::string& want) {
  cl_uint count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS) count = 0;  // none installed
  std::vector<cl_platform_id> ids(count);
  if (count > 0) check(clGetPlatformIDs(count, ids.data(), nullptr), "clGetPlatformIDs");
  for (cl_platform_id p : ids)
    if (platform_name(p).find(want) != std::string::npos) return p;
  std::fprintf(stderr, "p14_opencl: no OpenCL platform whose name contains \"%s\"; found:", want.c_str());
  for (cl_platform_id p : ids) std::fprintf(stderr, " \"%s\"", platform_name(p).c_str());
  std::fprintf(stderr, "%s\n", ids.empty() ? " none" : "");
  std::exit(3);
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out;
}

// One level of scan_any_size's recursion: its block-sum buffers, made before the clock starts.
struct Level {
  int n, blocks;
  cl_mem sums = nullptr, scanned = nullptr;
};

struct Scan {
  cl_context ctx;
  cl_command_queue queue;
  cl_kernel block_scan, add_offsets;
  int tpb;
  std::vector<Level> levels;
  std::vector<cl_event> events;  // one per launch of the current scan

  void plan(int n) {
    for (;;) {
      Level L{n, (n + 2 * tpb - 1) / (2 * tpb)};
      if (L.blocks > 1) {
        cl_int err;
        L.sums = clCreateBuffer(ctx, CL_MEM_READ_WRITE, L.blocks * sizeof(cl_int), nullptr, &err);
        check(err, "clCreateBuffer");
        L.scanned = clCreateBuffer(ctx, CL_MEM_READ_WRITE, L.blocks * sizeof(cl_int), nullptr, &err);
        check(err, "clCreateBuffer");
      }
      levels.push_back(L);
      if (L.blocks == 1) return;
      n = L.blocks;
    }
  }

  void launch(cl_kernel k, int blocks) {
    const size_t global = size_t(blocks) * tpb, local = tpb;
    cl_event e;
    check(clEnqueueNDRangeKernel(queue, k, 1, nullptr, &global, &local, 0, nullptr, &e), "clEnqueueNDRangeKernel");
    events.push_back(e);
  }

  // scan_any_size of solutions/p14/p14.cu. Returns the launched work-items.
  long long run(cl_mem in, cl_mem out, size_t k) {
    const Level& L = levels[k];
    cl_mem sums = L.sums;  // null at the last level: one block, no block sums
    check(clSetKernelArg(block_scan, 0, sizeof(cl_mem), &in), "clSetKernelArg");
    check(clSetKernelArg(block_scan, 1, sizeof(cl_mem), &out), "clSetKernelArg");
    check(clSetKernelArg(block_scan, 2, sizeof(cl_mem), &sums), "clSetKernelArg");
    check(clSetKernelArg(block_scan, 3, sizeof(cl_int), &L.n), "clSetKernelArg");
    check(clSetKernelArg(block_scan, 4, tpb * sizeof(cl_int), nullptr), "clSetKernelArg");  // __local pairs
    launch(block_scan, L.blocks);  // the arguments are captured here, so the recursion may reset them
    if (L.blocks == 1) return tpb;
    long long items = 2LL * L.blocks * tpb;
    items += run(L.sums, L.scanned, k + 1);
    check(clSetKernelArg(add_offsets, 0, sizeof(cl_mem), &out), "clSetKernelArg");
    check(clSetKernelArg(add_offsets, 1, sizeof(cl_mem), &L.scanned), "clSetKernelArg");
    check(clSetKernelArg(add_offsets, 2, sizeof(cl_int), &L.n), "clSetKernelArg");
    launch(add_offsets, L.blocks);
    return items;
  }

  // Seconds the launches of the last scan ran, by their profiling events; releases them.
  double kernel_seconds() {
    double total = 0;
    for (cl_event e : events) {
      cl_ulong start = 0, end = 0;
      check(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr), "clGetEventProfilingInfo");
      check(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr), "clGetEventProfilingInfo");
      total += (end - start) * 1e-9;
      clReleaseEvent(e);
    }
    events.clear();
    return total;
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int n = 1 << 20, tpb = 256, runs = 5, warmup = 1;
  std::string want = "Portable Computing Language", kernels = P14_CL_PATH;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "usage: %s --n N --tpb TPB --runs R --platform SUBSTRING [--kernels FILE] [--warmup W]\n", argv[0]);
      return 2;
    }
    const char* v = argv[++i];
    if (a == "--n") n = std::atoi(v);
    else if (a == "--tpb") tpb = std::atoi(v);
    else if (a == "--runs") runs = std::max(1, std::atoi(v));
    else if (a == "--warmup") warmup = std::max(0, std::atoi(v));
    else if (a == "--platform") want = v;
    else if (a == "--kernels") kernels = v;
    else {
      std::fprintf(stderr, "p14_opencl: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (n < 1 || tpb < 1) {
    std::fprintf(stderr, "p14_opencl: --n and --tpb must be positive\n");
    return 2;
  }
  std::ifstream file(kernels);
  if (!file) {
    std::fprintf(stderr, "p14_opencl: cannot read %s\n", kernels.c_str());
    return 2;
  }
  std::stringstream text;
  text << file.rdbuf();
  const std::string source = text.str();

  cl_platform_id platform = find_platform(want);
  cl_device_id device;
  check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr), "clGetDeviceIDs");
  cl_int err;
  cl_context ctx = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  check(err, "clCreateContext");
  cl_command_queue queue = clCreateCommandQueue(ctx, device, CL_QUEUE_PROFILING_ENABLE, &err);
  check(err, "clCreateCommandQueue");
  const char* src = source.c_str();
  cl_program program = clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
  check(err, "clCreateProgramWithSource");
  if (clBuildProgram(program, 1, &device, nullptr, nullptr, nullptr) != CL_SUCCESS) {
    size_t size = 0;
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
    std::string log(size, '\0');
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, &log[0], nullptr);
    std::fprintf(stderr, "p14_opencl: building %s failed:\n%s\n", kernels.c_str(), log.c_str());
    return 2;
  }
  Scan scan{ctx, queue, clCreateKernel(program, "scan_block_with_sums", &err), nullptr, tpb, {}, {}};
  check(err, "clCreateKernel");
  scan.add_offsets = clCreateKernel(program, "add_block_offsets", &err);
  check(err, "clCreateKernel");

  // The same input as p14_loops.cpp (cl_int is int on every platform OpenCL runs on here).
  std::vector<cl_int> in = scan_input(n);  // not const: clCreateBuffer takes a void*
  const std::vector<cl_int> expect = inclusive_scan_of(in);
  std::vector<cl_int> out(n), zeros(n, 0);
  const size_t bytes = n * sizeof(cl_int);
  cl_mem d_in = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, in.data(), &err);
  check(err, "clCreateBuffer");
  cl_mem d_out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, nullptr, &err);
  check(err, "clCreateBuffer");
  scan.plan(n);

  std::vector<double> seconds, wall;
  long long items = 0;
  bool correct = true;
  for (int r = 0; r < warmup + runs; ++r) {
    // A stale result from the previous scan must not pass for this one's.
    check(clEnqueueWriteBuffer(queue, d_out, CL_TRUE, 0, bytes, zeros.data(), 0, nullptr, nullptr), "clEnqueueWriteBuffer");
    const auto t0 = std::chrono::steady_clock::now();
    items = scan.run(d_in, d_out, 0);
    check(clFinish(queue), "clFinish");
    const auto t1 = std::chrono::steady_clock::now();
    const double kernel = scan.kernel_seconds();
    check(clEnqueueReadBuffer(queue, d_out, CL_TRUE, 0, bytes, out.data(), 0, nullptr, nullptr), "clEnqueueReadBuffer");
    correct = correct && out == expect;  // the warm-up scans are checked too
    if (r < warmup) continue;
    seconds.push_back(kernel);
    wall.push_back(std::chrono::duration<double>(t1 - t0).count());
  }
  // The compute units show whether a limit such as POCL_MAX_PTHREAD_COUNT took effect.
  cl_uint units = 0;
  check(clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, nullptr), "clGetDeviceInfo");
  std::printf("{\"threads\": %lld, \"seconds\": %.6f, \"min_seconds\": %.6f, \"wall_seconds\": %.6f, "
              "\"timing\": \"profiling events\", \"repeat\": %d, \"warmup\": %d, \"platform\": \"%s\", "
              "\"version\": \"%s\", \"device\": \"%s\", \"compute_units\": %u, \"correct\": %s, \"verdict\": \"%s\"}\n",
              items, median(seconds), *std::min_element(seconds.begin(), seconds.end()), median(wall), runs, warmup,
              json_escape(platform_name(platform)).c_str(), json_escape(platform_info(platform, CL_PLATFORM_VERSION)).c_str(),
              json_escape(device_name(device)).c_str(), units, correct ? "true" : "false", correct ? "pass" : "FAIL");
  return correct ? 0 : 1;
}
