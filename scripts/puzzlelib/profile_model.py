"""A modeled time for each profiled launch, from the simulator's counters (profile_data.py).

The simulator does not time anything: it counts what the memory pipeline does with each warp's
accesses. This model turns those counts into microseconds on an NVIDIA H200, so that `profile`
can rank variants and say which cost dominates. It is a roofline with three ceilings and a fixed
cost per launch:

    launch  = LAUNCH_US + max(issue + conflicts, shared, dram) + atomics

    issue   = warp instructions / (sms * ISSUE_PER_CYCLE * CLOCK_HZ), sms = min(SMS, blocks)
              warp instructions are estimated, as the simulator sees only memory operations:
              INST_PER_MEMORY_OP per memory instruction (the address arithmetic, the add, the loop
              test and branch that come with each load or store in these kernels), plus one per
              barrier and COLLECTIVE_INST per warp collective (the shuffle and its add).
    shared  = wavefronts / (sms * WAVEFRONTS_PER_CYCLE * CLOCK_HZ): each SM's shared memory serves
              one wavefront (one pass through its 32 banks) per cycle.
    conflicts = the wavefronts beyond the fewest, at the same rate: a conflicted instruction is
              replayed, and the warp that issued it waits, so they add to the issue time.
    dram    = global sectors * 32 bytes / DRAM_BYTES_PER_S: uncoalesced accesses add sectors.
    atomics = global atomic warp instructions * ATOMIC_NS: the puzzles' atomics meet at one hot
              address (a counter, a flag), where they are served one after another.

Constants, and where they come from (docs/architecture.md, "The cost model"):
  SMS = 132, CLOCK_HZ = 1.98e9                  the H200's SMs and boost clock
  ISSUE_PER_CYCLE = 2                           of the 4 schedulers' peak: the reduction loops are
                                                chains of dependent instructions cut by barriers;
                                                ncu's instruction counts over the measured times of
                                                p12 k1 and k2 give 2.6 and 2.0 per SM-cycle
  INST_PER_MEMORY_OP = 14                       ncu's SASS count of p12 k1, k3, k4 (9.47M, 3.44M,
                                                1.84M at 2^20) over the simulator's memory
                                                instructions: 14.5, 15.6, 14.5
  WAVEFRONTS_PER_CYCLE = 1                      Nsight Compute's shared-memory pipe rate
  DRAM_BYTES_PER_S = 4.0e12                     the H200's achievable copy bandwidth (ANCHORS.md)
  LAUNCH_US = 2.0                               back-to-back launches on the same stream
  ATOMIC_NS = 0.8                               p12 --atomic: 2^22 ints in 0.103 ms on the H200,
                                                131,072 warp-level atomics on one address
"""

from __future__ import annotations

from typing import Dict, List

from .profile_data import Launch

SMS = 132
CLOCK_HZ = 1.98e9
ISSUE_PER_CYCLE = 2
INST_PER_MEMORY_OP = 14
COLLECTIVE_INST = 2
WAVEFRONTS_PER_CYCLE = 1
DRAM_BYTES_PER_S = 4.0e12
SECTOR_BYTES = 32
LAUNCH_US = 2.0
ATOMIC_NS = 0.8


def warp_instructions(launch: Launch) -> float:
    """The estimated warp-level instructions of a launch (all kinds, not only memory)."""
    memory = sum(s.counts.get("inst", 0) for s in launch.sites)
    collectives = sum(c[3] for c in launch.collectives)
    return INST_PER_MEMORY_OP * memory + launch.barrier_inst() + COLLECTIVE_INST * collectives


def issue_us(instructions: float, sms: int = SMS) -> float:
    return instructions / (sms * ISSUE_PER_CYCLE * CLOCK_HZ) * 1e6


def shared_us(wavefronts: float, sms: int = SMS) -> float:
    return wavefronts / (sms * WAVEFRONTS_PER_CYCLE * CLOCK_HZ) * 1e6


def dram_us(sectors: float) -> float:
    return sectors * SECTOR_BYTES / DRAM_BYTES_PER_S * 1e6


def atomic_us(instructions: float) -> float:
    return instructions * ATOMIC_NS * 1e-3


def busy_sms(launch: Launch) -> int:
    """The SMs a launch keeps busy: one block runs on one SM, so a launch of a few blocks uses few."""
    return max(1, min(SMS, launch.blocks))


def launch_terms(launch: Launch) -> Dict[str, float]:
    """Each term of the model for one launch, in microseconds, and their total ("time")."""
    wavefronts = sum(s.counts.get("wavefronts", 0) for s in launch.sites)
    conflicts = sum(s.conflicts for s in launch.sites if s.op.startswith("shared"))
    sectors = sum(s.counts.get("sectors", 0) for s in launch.sites)
    atomics = launch.total("global_atom", "inst")
    sms = busy_sms(launch)
    terms = {"launch": LAUNCH_US, "issue": issue_us(warp_instructions(launch), sms),
             "conflicts": shared_us(conflicts, sms), "shared": shared_us(wavefronts, sms), "dram": dram_us(sectors), "atomics": atomic_us(atomics)}
    busiest = max(terms["issue"] + terms["conflicts"], terms["shared"], terms["dram"])
    terms["time"] = terms["launch"] + busiest + terms["atomics"]
    return terms


def bound(terms: Dict[str, float]) -> str:
    """Which ceiling sets a launch's time: issue (with the conflicts' replays), shared, dram,
    atomics, or launch (when the fixed cost is larger than the rest)."""
    ceilings = {"issue": terms["issue"] + terms["conflicts"], "shared": terms["shared"], "dram": terms["dram"]}
    busiest = max(ceilings, key=lambda k: ceilings[k])
    if terms["launch"] >= ceilings[busiest] + terms["atomics"]:
        return "launch"
    return "atomics" if terms["atomics"] > ceilings[busiest] else busiest


def total_us(launches: List[Launch]) -> float:
    """The modeled time of a variant: its launches run one after another."""
    return sum(launch_terms(l)["time"] for l in launches)
