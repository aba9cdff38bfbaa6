// Warp collectives: the *_sync intrinsics and __activemask(), where the lanes of one warp meet
// and exchange values; apart from the scheduler, which only resumes the lanes they release.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

#include "scheduler.h"
#include "events.h"

namespace cudasim {
namespace detail {

static const char* op_name(WarpOp op) {
  switch (op) {
    case WarpOp::Sync: return "__syncwarp";
    case WarpOp::ShflIdx: return "__shfl_sync";
    case WarpOp::ShflUp: return "__shfl_up_sync";
    case WarpOp::ShflDown: return "__shfl_down_sync";
    case WarpOp::ShflXor: return "__shfl_xor_sync";
    case WarpOp::Ballot: return "__ballot_sync";
    case WarpOp::Any: return "__any_sync";
    case WarpOp::All: return "__all_sync";
    case WarpOp::ReduceAdd: return "__reduce_add_sync";
    case WarpOp::ReduceMin: return "__reduce_min_sync";
    case WarpOp::ReduceMax: return "__reduce_max_sync";
    case WarpOp::Activemask: return "__activemask";
  }
  return "?";
}

static uint64_t poison_bits(int bytes) {
  uint64_t v = 0xCDCDCDCDCDCDCDCDull;
  return bytes >= 8 ? v : (v & ((1ull << (8 * bytes)) - 1));
}

// What a shuffle returns for a lane that has no value to give, when undefined values are not errors
// (programs run with `puzzle.py sim`): a different pattern under each thread schedule, like the fill
// of uninitialized shared memory (0xCD bytes, 0x7F bytes, then bits from the seed), so that a result
// that depends on it differs between schedules and is reported, while one that discards it passes.
static uint64_t undefined_bits(const Worker& w, unsigned warp_index, unsigned lane, int bytes) {
  int s = w.grid ? w.grid->schedule_index : 0;
  uint64_t v = 0xCDCDCDCDCDCDCDCDull;
  if (s == 1) {
    v = 0x7F7F7F7F7F7F7F7Full;
  } else if (s >= 2) {
    uint64_t state = (w.grid ? w.grid->seed : 1) ^ ((uint64_t)w.block_linear << 24) ^ (warp_index << 5 | lane);
    v = splitmix(state);
  }
  return bytes >= 8 ? v : (v & ((1ull << (8 * bytes)) - 1));
}

// One warning per call site for the whole program, not one per lane, block and schedule.
static bool first_warning(const char* file, int line) {
  static std::mutex mu;
  static std::set<std::string> given;
  std::lock_guard<std::mutex> lock(mu);
  return given.insert(std::string(file ? file : "?") + ":" + std::to_string(line)).second;
}

static int64_t as_signed32(uint64_t v) { return (int64_t)(int32_t)(uint32_t)v; }

// All live lanes of the group's mask have arrived: compute every lane's result, wake them up.
void complete_group(Worker& w, unsigned warp_index, WarpGroup& g) {
  Thread* lanes = &w.threads[warp_index * 32];
  if (g.op == WarpOp::Activemask) {
    for (unsigned l = 0; l < 32; ++l) {
      if (!(g.arrived & (1u << l))) continue;
      lanes[l].warp_result = g.arrived;
      lanes[l].am_mask = g.arrived;
      lanes[l].am_file = g.file;
      lanes[l].am_line = g.line;
      if (lanes[l].st == St::AtWarp) {
        lanes[l].st = St::Runnable;
        lanes[l].ready = 0;
        --w.at_warp;
        w.woke = true;
      }
    }
    Observers::warp_collective(w, warp_index, g);
    return;
  }
  unsigned ballot = 0;
  int64_t red = 0;
  bool first = true;
  for (unsigned l = 0; l < 32; ++l) {
    if (!(g.arrived & (1u << l))) continue;
    if (g.value[l]) ballot |= 1u << l;
    int64_t v = g.is_signed ? as_signed32(g.value[l]) : (int64_t)(uint32_t)g.value[l];
    if (g.op == WarpOp::ReduceAdd) red += v;
    else if (g.op == WarpOp::ReduceMin) red = first ? v : std::min(red, v);
    else if (g.op == WarpOp::ReduceMax) red = first ? v : std::max(red, v);
    first = false;
  }
  for (unsigned l = 0; l < 32; ++l) {
    if (!(g.arrived & (1u << l))) continue;
    uint64_t r = 0;
    unsigned base = l & ~unsigned(g.width - 1);
    int src = -1;
    switch (g.op) {
      case WarpOp::ShflIdx: src = int(base + (unsigned(g.param[l]) & unsigned(g.width - 1))); break;
      case WarpOp::ShflUp: src = (int(l - base) >= g.param[l]) ? int(l) - g.param[l] : int(l); break;
      case WarpOp::ShflDown: src = (int(l - base) + g.param[l] < g.width) ? int(l) + g.param[l] : int(l); break;
      case WarpOp::ShflXor: {
        int s = int(l) ^ g.param[l];
        src = (s >= int(base + g.width) || s > 31 || s < 0) ? int(l) : s;
        break;
      }
      case WarpOp::Ballot: r = ballot; break;
      case WarpOp::Any: r = ballot != 0; break;
      case WarpOp::All: r = (ballot & g.arrived) == g.arrived; break;
      case WarpOp::ReduceAdd:
      case WarpOp::ReduceMin:
      case WarpOp::ReduceMax: r = (uint64_t)red; break;
      default: break;
    }
    if (src >= 0 && (g.arrived & (1u << src))) {
      r = g.value[src];
    } else if (src >= 0) {
      // A lane that is not taking part (outside the mask, exited, or absent) has no value to give:
      // the GPU returns an undefined value. The puzzles' harness teaches that this is a bug
      // (undefined_values_are_errors) and stops with a report. Elsewhere it is legal code as long
      // as the value is discarded (a tree whose guarded lanes read past the live ones), so the
      // lane gets a value that differs per schedule and the run goes on, with a warning.
      unsigned n = w.block.bdim.x * w.block.bdim.y * w.block.bdim.z;
      unsigned src_linear = warp_index * 32 + unsigned(src);
      const bool returned = src_linear < n && (g.mask & (1u << src));
      const char* why = src_linear >= n ? "does not exist (the block has fewer threads than the warp has lanes)"
                        : !returned && lanes[src].st == St::Exited ? "is not in the mask (it has returned from the kernel)"
                        : !returned                                 ? "is not in the mask"
                                                                    : "has already returned from the kernel";
      // The same four situations, as the diagnosis's "why".
      const char* why_fact = src_linear >= n                             ? "absent"
                             : !returned && lanes[src].st == St::Exited ? "not_in_mask_returned"
                             : !returned                                 ? "not_in_mask"
                                                                         : "returned";
      const char* advice =
          "Keep every lane whose value is read taking part in the call (no early return before it), give absent lanes a "
          "neutral value, or read only lanes that exist (e.g. check `lane + delta < active lanes`).";
      const bool strict = options().undefined_values_are_errors;
      if (strict && !w.faulted) {
        w.faulted = true;
        Facts f;
        f.set("case", "undefined_value").set("lane", l).set("warp", warp_index).set("source_lane", src);
        f.set("call", op_name(g.op)).set("why", why_fact);
        w.grid->fail(block_diagnosis(returned ? Kind::warp_lane_returned : Kind::warp_misuse, w, &lanes[l], where(g.file, g.line), f),
                     strf("warp misuse at %s: %s, block %s: lane %u of warp %u reads lane %d through %s, but lane %d %s; it "
                          "would get garbage.\n  %s",
                          where(g.file, g.line).c_str(), kernel_str(w.grid->site).c_str(),
                          dim_str(w.block.bid, w.block.gdim).c_str(), l, warp_index, src, op_name(g.op), src, why, advice));
      } else if (!strict && first_warning(g.file, g.line)) {
        std::fprintf(stderr,
                     "cudasim: warning: undefined value at %s: %s, block %s: lane %u of warp %u reads lane %d through %s, but "
                     "lane %d %s; it gets an undefined value (on a GPU too).\n"
                     "  The run goes on with a value that differs between the three thread schedules: harmless if the lane "
                     "discards it; if it reaches device memory, the schedules' results differ and that is reported. (Shown "
                     "once for this line.)\n  %s\n",
                     where(g.file, g.line).c_str(), kernel_str(w.grid->site).c_str(), dim_str(w.block.bid, w.block.gdim).c_str(),
                     l, warp_index, src, op_name(g.op), src, why, advice);
      }
      r = strict ? poison_bits(g.value_bytes) : undefined_bits(w, warp_index, l, g.value_bytes);
    }
    lanes[l].warp_result = r;
    if (lanes[l].st == St::AtWarp) {
      lanes[l].st = St::Runnable;
      lanes[l].ready = 0;
      --w.at_warp;
      w.woke = true;
    }
  }
  Observers::warp_collective(w, warp_index, g);
}

uint64_t warp_collective(WarpOp op, unsigned mask, uint64_t value, int param, int width, int value_bytes, bool is_signed,
                         const char* file, int line) {
  Worker* wk = tl_worker;
  if (!wk || !tl_thread) device_misuse(op_name(op), file, line);
  Worker& w = *wk;
  Thread& t = self_thread();
  unsigned lane = t.view.lane, warp_index = t.linear / 32;
  Warp& wp = w.warps[warp_index];
  auto at = [&] { return where(file, line); };  // formatted on error paths only
  if (!(mask & (1u << lane)))
    thread_fault(w, t, Kind::warp_mask_without_self,
                 strf("warp misuse at %s: %s: lane %u calls %s with mask 0x%08x, which does not include lane %u itself.\n"
                      "  Every lane that calls a *_sync intrinsic must be named in its mask.",
                      at().c_str(), who(w, t).c_str(), lane, op_name(op), mask, lane),
                 at(), "", Facts().set("lane", lane).set("call", op_name(op)).set("mask", mask));
  if (width <= 0 || width > 32 || (width & (width - 1)))
    thread_fault(w, t, Kind::warp_misuse, strf("warp misuse at %s: %s: width %d of %s is not a power of two between 1 and 32.", at().c_str(),
                                    who(w, t).c_str(), width, op_name(op)),
                 at(), "", Facts().set("case", "width").set("lane", lane).set("call", op_name(op)).set("width", width));
  WarpGroup* g = nullptr;
  for (WarpGroup& x : wp.groups) {
    if (op == WarpOp::Activemask || x.op == WarpOp::Activemask) {
      // Lanes meet in __activemask() by call site, not by mask.
      if (op == x.op && x.line == line && x.file && file && std::strcmp(x.file, file) == 0) {
        g = &x;
        break;
      }
      continue;
    }
    if (x.mask == mask) {
      g = &x;
      break;
    }
    // Groups with overlapping masks may be pending at once, at different calls: lanes 0-15 shuffle
    // among themselves while lanes 16-31 already wait for the whole warp at a later call. What is
    // wrong is one call reached with two different masks, e.g. __syncwarp(lane < 16 ? m1 : m2),
    // while the waiting group names this lane.
    if ((x.mask & (1u << lane)) && x.line == line && x.file && file && std::strcmp(x.file, file) == 0) {
      unsigned other = __builtin_ctz(x.arrived);
      thread_fault(w, t, Kind::warp_misuse,
                   strf("warp misuse at %s: %s: lane %u calls %s with mask 0x%08x while lane %u of the same warp waits in %s at %s "
                        "with mask 0x%08x.\n  Lanes that meet in a *_sync call must all pass the same mask.",
                        at().c_str(), who(w, t).c_str(), lane, op_name(op), mask, other, op_name(x.op), where(x.file, x.line).c_str(),
                        x.mask),
                   at(), "",
                   Facts().set("case", "mask_mismatch").set("lane", lane).set("call", op_name(op)).set("mask", mask)
                       .set("other_lane", other).set("other_call", op_name(x.op)).set("other_site", where(x.file, x.line))
                       .set("other_mask", x.mask));
    }
  }
  if (g && g->op != op) {
    unsigned other = __builtin_ctz(g->arrived);
    thread_fault(w, t, Kind::warp_misuse,
                 strf("warp misuse at %s: %s: lane %u calls %s while lane %u waits in %s at %s with the same mask 0x%08x.\n"
                      "  The lanes of a mask must all call the same intrinsic; the others took a different branch.",
                      at().c_str(), who(w, t).c_str(), lane, op_name(op), other, op_name(g->op), where(g->file, g->line).c_str(), mask),
                 at(), "",
                 Facts().set("case", "call_mismatch").set("lane", lane).set("call", op_name(op)).set("mask", mask)
                     .set("other_lane", other).set("other_call", op_name(g->op)).set("other_site", where(g->file, g->line)));
  }
  if (!g) {
    wp.groups.push_back(WarpGroup{op, mask, 0, width, value_bytes, is_signed, file, line, {}, {}});
    g = &wp.groups.back();
  }
  g->value[lane] = value;
  g->param[lane] = param;
  g->arrived |= 1u << lane;
  if (group_complete(wp, *g)) {
    complete_group(w, warp_index, *g);
    uint64_t r = t.warp_result;
    wp.groups.erase(wp.groups.begin() + (g - wp.groups.data()));
    return r;
  }
  t.st = St::AtWarp;
  t.ready = kNotReady;
  t.wait_file = file;
  t.wait_line = line;
  t.wait_what = op_name(op);
  t.wait_mask = mask;
  ++w.at_warp;
  switch_away(w, t);
  return t.warp_result;
}

}  // namespace detail
}  // namespace cudasim
