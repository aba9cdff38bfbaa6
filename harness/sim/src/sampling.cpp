// Checks that scale: a launch of many threads in a program run with `puzzle.py sim` (or the CMake
// route) is checked on a sample of its blocks, the first, the last and a seeded random set; the
// other blocks run unchecked, and the launch's other thread orders run on every core. A finding
// in the sample makes launch.cpp run the launch again with every block checked, so the report
// names every block that touches the address. The puzzles' harness checks every block
// (Options::sample = 0). See harness/sim/README.md, "Big launches".
#include "sampling.h"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "check.h"
#include "checker_state.h"
#include "internal.h"
#include "profile.h"
#include "trace.h"

namespace cudasim {
namespace detail {

// Auto: a launch is sampled from this many threads (blocks x threads per block) and blocks on.
constexpr uint64_t kSampleThreads = uint64_t(1) << 17;  // 131072: 128 blocks of 1024
constexpr uint64_t kSampleBlocks = 64;
constexpr unsigned kAutoRandom = 8;  // random blocks beside the first and the last

bool launch_sampled(uint64_t blocks, uint64_t threads) {
  const int s = options().sample;
  // The profiler and the trace follow the checked run's blocks: every block, when they are on.
  if (s == 0 || profiles(0) || g_trace_on) return false;
  if (s > 0) return blocks > uint64_t(s) + 2;
  return blocks >= kSampleBlocks && blocks * threads >= kSampleThreads;
}

// "0, 3 and 7"; with last = ", ", "0, 3, 7" (a fact, worded in any language).
static std::string block_list(const std::vector<uint32_t>& v, const dim3& gd, const char* last = " and ") {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += i + 1 == v.size() ? last : ", ";
    out += dim_str(uint3{v[i] % gd.x, (v[i] / gd.x) % gd.y, v[i] / (gd.x * gd.y)}, gd);
  }
  return out;
}

// The memory the sampled launch in flight started from, and whether a block outside the sample
// has run since its writes were last marked.
static const Snapshot* g_before = nullptr;
static bool g_unmarked = false;

static void mark_unchecked_writes() {
  const bool atomic = g_unchecked_atomic;
  snapshot_changes(*g_before, [atomic](uintptr_t p, size_t n) { shadow_kernel_write(p, n, atomic); });
  g_unmarked = false;
}

void choose_sample(Grid& g, uint64_t launch_no, const Snapshot* before) {
  g_before = before;
  g_unmarked = false;
  const uint64_t blocks = uint64_t(g.grid.x) * g.grid.y * g.grid.z;
  const unsigned want = options().sample > 0 ? unsigned(options().sample) : kAutoRandom;
  g.sample.assign(blocks, 0);
  std::vector<uint32_t> chosen{0, uint32_t(blocks - 1)};
  g.sample[0] = g.sample[blocks - 1] = 1;
  uint64_t x = options().seed * 0xD1B54A32D192ED03ull + launch_no * 0x9E3779B97F4A7C15ull + 1;
  for (unsigned k = 0; k < want && chosen.size() < blocks;) {
    x ^= x >> 33;  // splitmix-style steps: the same sample for the same seed and launch
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 29;
    x += 0x9E3779B97F4A7C15ull;
    const uint32_t b = uint32_t(x % blocks);
    if (g.sample[b]) continue;
    g.sample[b] = 1;
    chosen.push_back(b);
    ++k;
  }
  std::sort(chosen.begin(), chosen.end());
  g_unchecked_block = g_unchecked_atomic = false;
  // Once per launch site: a loop of 300 launches says it once.
  static std::mutex mu;
  static std::set<std::pair<const char*, int>> told;
  std::lock_guard<std::mutex> lock(mu);
  if (!told.insert({g.site.file, g.site.line}).second) return;
  const uint64_t threads = uint64_t(g.block.x) * g.block.y * g.block.z;
  const std::string english = strf(
      "%s: %s (%llu blocks of %llu threads): the memory checker checks %zu of its blocks "
      "(%s; the sample changes with each launch and with CUDASIM_SEED), and runs the others unchecked; its "
      "other thread orders run on every core. A race or an uninitialized read in an unchecked block is not "
      "found. To check every block (slower), run with CUDASIM_SAMPLE=all.",
      kernel_str(g.site).c_str(), options().sample > 0 ? strf("a launch sampled (CUDASIM_SAMPLE=%d)", options().sample).c_str() : "a big launch",
      (unsigned long long)blocks, (unsigned long long)threads, chosen.size(), block_list(chosen, g.grid).c_str());
  Facts f;
  f.set("kernel", g.site.kernel).set("launch_site", where(g.site.file, g.site.line)).set("blocks", (long long)blocks)
      .set("threads", (long long)threads).set("checked", chosen.size()).set("list", block_list(chosen, g.grid, ", "))
      .set("sample", options().sample);
  const char* rest =
      " ({blocks} blocks of {threads} threads): the memory checker checks {checked} of its blocks ({list}; the sample "
      "changes with each launch and with CUDASIM_SEED), and runs the others unchecked; its other thread orders run on "
      "every core. A race or an uninitialized read in an unchecked block is not found. To check every block (slower), "
      "run with CUDASIM_SAMPLE=all.";
  if (options().sample > 0)
    say_note("sampled_launch", english,
             (std::string("kernel {kernel} (launched at {launch_site}): a launch sampled (CUDASIM_SAMPLE={sample})") + rest).c_str(), f);
  else
    say_note("big_launch", english, (std::string("kernel {kernel} (launched at {launch_site}): a big launch") + rest).c_str(), f);
}

void sample_block(Worker& w) {
  if (!w.checking) return;
  const Grid* g = g_chk.grid;
  if (!g || g->sample.empty()) return;
  // The checked run of a sampled launch runs its blocks one after another on one worker, so the
  // front end's switch can follow the block: off for a block outside the sample (the fast path).
  const bool checked = g->sample[w.block_linear];
  g_observed_launch = checked;
  g_unchecked_block = !checked;
  // A checked block may read what the unchecked blocks before it wrote (a flag, a partial sum).
  if (checked && g_unmarked) mark_unchecked_writes();
  if (checked) return;
  g_unmarked = true;
  w.checking = w.observed = w.spin_watch = false;
}

void unchecked_writes_done(const Snapshot& before) {
  g_unchecked_block = false;
  // What the blocks outside the sample wrote holds a value now: the elements that differ from the
  // memory the launch started from (an element written with the value it had is not seen). If one
  // of them used an atomic, its writes may legally differ between thread orders (a note, not a race).
  g_before = &before;
  mark_unchecked_writes();
  g_unchecked_atomic = false;
  g_before = nullptr;
}

void note_full_recheck(const LaunchSite& site) {
  g_unchecked_block = g_unchecked_atomic = false;
  Facts f;
  f.set("kernel", site.kernel).set("launch_site", where(site.file, site.line));
  say_note("full_recheck",
           kernel_str(site) + ": the memory checker found a problem in the sampled blocks; running the launch again with "
                              "every block checked, to report every block involved.",
           "kernel {kernel} (launched at {launch_site}): the memory checker found a problem in the sampled blocks; running "
           "the launch again with every block checked, to report every block involved.",
           f);
}

}  // namespace detail
}  // namespace cudasim
