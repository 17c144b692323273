#!/usr/bin/env python3
"""Work efficiency of airy-sim over MPI ranks, from instruction counts.

Instruction counts (valgrind --tool=callgrind) are exact and repeatable on a
noisy machine, and oversubscribed ranks do not change them. For p ranks

    E_p = I_1 / (p * max_r I_r)

where I_1 is the count of the same run in one process (one thread, no MPI)
and I_r the count of rank r outside the MPI library: main's and the threads
Airy starts, less the inclusive cost of every call from Airy's code (any
object but the MPI libraries) into an MPI_*/PMPI_* function (a rank that
waits spins inside MPI calls), which is reported apart (the process start-up
before main and the MPI library's own threads are left out), with the run's own --json figures: the bytes each
rank moves (reductions and broadcasts; its share of the file) and its time
in MPI calls.

  tests/scaling/callgrind-scaling.py --sim build/app/airy-sim \\
      --preset seed-widefield --planes 128 --size 512 --ranks 1,2,4
  tests/scaling/callgrind-scaling.py --sim build/app/airy-sim --preset seed-widefield \\
      --planes 32 --size 256 --ranks 1,4 --sweep 'elements[1].value=0:1:16'
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

MPI_OBJECT = re.compile(r"lib(mpi|open-pal|open-rte|pmix|hwloc|event|ucp|ucs|uct|fabric|psm)|/mca_|/openmpi/")
MPI_FUNCTION = re.compile(r"^P?MPI_")


def parse_callgrind(path):
    """(total Ir, Airy's own Ir): main's inclusive cost and that of the
    threads not of the MPI library (a thread's body under start_thread), less the inclusive cost of
    the calls from code outside the MPI libraries into MPI_*/PMPI_*
    functions. The start-up before main, the exit after it and the MPI
    library's own threads are not Airy's work."""
    names = {"ob": {}, "fn": {}}
    total = 0
    main = threads = in_mpi = 0
    ob = cob = fn = cfn = None
    fn_ob = {}
    pending_call = False
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            m = re.match(r"^(c?)(ob|fn)=(?:\((\d+)\))?\s*(.*)$", line)
            if m:
                callee, kind, ident, name = m.groups()
                table = names[kind]
                if ident is not None:
                    if name:
                        table[ident] = name
                    name = table.get(ident, "?")
                if kind == "ob":
                    if callee:
                        cob = name
                    else:
                        ob = name
                elif callee:
                    cfn = name
                    fn_ob.setdefault(name, cob or ob)
                    cob = None
                else:
                    fn = name
                    fn_ob.setdefault(name, ob)
                continue
            if line.startswith("calls="):
                pending_call = True
                continue
            if line.startswith(("summary:", "totals:")):
                total = max(total, int(line.split()[1]))
                continue
            if pending_call and line[0] in "0123456789+-*":
                # the inclusive cost of the call just named
                parts = line.split()
                cost = int(parts[1]) if len(parts) > 1 else 0
                caller_mpi = bool(MPI_OBJECT.search(ob or "")) or bool(MPI_FUNCTION.match(fn or ""))
                if cfn == "main":
                    main += cost
                elif (fn or "").startswith("start_thread") and not (cfn or "").startswith("start_thread"):
                    # a thread's body: Airy's (GLib's threads, FFTW's), or
                    # the MPI library's own (left out)
                    if not MPI_OBJECT.search(fn_ob.get(cfn, "")):
                        threads += cost
                elif not caller_mpi and cfn and MPI_FUNCTION.match(cfn):
                    in_mpi += cost
                pending_call = False
    return total, main + threads - in_mpi, in_mpi


def system_json(sim, preset, system, planes, size):
    if system:
        text = open(system).read()
    else:
        text = subprocess.run([sim, "preset", preset or "seed-widefield"], check=True, capture_output=True,
                              text=True).stdout
    d = json.loads(text)
    if planes:
        d["z"]["count"] = planes
    if size:
        n0 = d["grid"]["shape"][0]
        d["grid"]["shape"] = [size, size]
        d["grid"]["spacing"] = d["grid"]["spacing"] * n0 / size
    return d


def run(cmd, env):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stdout + p.stderr)
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim", default=os.environ.get("AIRY_SIM", "airy-sim"))
    ap.add_argument("--mpirun", default=os.environ.get("AIRY_MPIRUN", "mpirun"),
                    help="empty: one process only (a build without MPI)")
    ap.add_argument("--valgrind", default="valgrind")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--preset", help="a preset (default seed-widefield)")
    g.add_argument("--system")
    ap.add_argument("--planes", type=int, default=0)
    ap.add_argument("--size", type=int, default=0)
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--sweep", metavar="PATH=START:STOP:COUNT",
                    help="count a sweep of these systems (airy-sim sweep --set) instead of one run")
    ap.add_argument("--json", action="store_true", help="print the table as JSON too")
    a = ap.parse_args()

    ranks = sorted({int(x) for x in a.ranks.split(",")} | {1})
    if shutil.which(a.valgrind) is None:
        print(f"SKIP: {a.valgrind} not found (apt-get install valgrind)")
        sys.exit(77)
    if not a.mpirun or shutil.which(a.mpirun) is None:
        print("# no mpirun (or airy-sim built without MPI): one process only")
        ranks = [1]
    work = tempfile.mkdtemp(prefix="airy-scaling-")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               XDG_CACHE_HOME=os.path.join(work, "cache"))
    sys_path = os.path.join(work, "system.json")
    with open(sys_path, "w") as f:
        json.dump(system_json(a.sim, a.preset, a.system, a.planes, a.size), f)
    out = os.path.join(work, "out.tif")
    base = [a.sim, "run", sys_path, "-o", out, "--threads", "1", "--json"]
    if a.sweep:
        base = [a.sim, "sweep", sys_path, "--set", a.sweep, "-o", os.path.join(work, "sweep"), "--threads", "1",
                "--json"]
    rows = []
    for p in ranks:
        launch = [] if p == 1 else [a.mpirun, "--oversubscribe", "-np", str(p)]
        # FFTW's wisdom for this split made first, outside the counts, and
        # under valgrind (--tool=none): its CPU has no AVX-512, so wisdom
        # made natively may hold codelets that a counted run must plan anew
        run(launch + [a.valgrind, "--tool=none", "-q"] + base, env)
        # one file per rank (one process: no rank in the name)
        pattern = os.path.join(work, f"cg.{p}.%q{{OMPI_COMM_WORLD_RANK}}.out" if p > 1 else "cg.1.out")
        vg = [a.valgrind, "--tool=callgrind", f"--callgrind-out-file={pattern}"]
        cmd = launch + vg + base
        summary = json.loads(run(cmd, env).strip().splitlines()[-1])
        files = sorted(x for x in os.listdir(work) if x.startswith(f"cg.{p}."))
        counts = [parse_callgrind(os.path.join(work, x)) for x in files]
        rows.append((p, counts, summary))
    i1 = rows[0][1][0][1]
    # E_p: the slowest rank's work against an even share of one process's;
    # W_p = I_1 / sum_r I_r: the work added by the ranks, whatever the
    # balance (a sweep hands systems out by time, not by count)
    print(f"{'p':>2}  {'I_r outside MPI, per rank':<34} {'max_r I_r':>9} {'E_p':>6} {'W_p':>6}  "
          f"{'I in MPI calls':<20} {'I in all':<20} {'comm KiB':<18} {'written MiB':<22} {'s in MPI calls'}")
    table = []
    for p, counts, s in rows:
        own = [o for _, o, _ in counts]
        e = i1 / (p * max(own))
        mpi = [m for _, _, m in counts]
        moved = s.get("comm_bytes", [0] * p)
        wrote = s.get("write_bytes", [0] * p)
        secs = s.get("mpi_s", [0.0] * p)
        print(f"{p:>2}  {', '.join(f'{x / 1e9:.3f} G' for x in own):<34} {max(own) / 1e9:>7.3f} G {e:>6.3f} "
              f"{i1 / sum(own):>6.3f}  "
              f"{', '.join(f'{x / 1e6:.0f} M' for x in mpi):<20} "
              f"{', '.join(f'{t / 1e6:.0f} M' for t, _, _ in counts):<20} "
              f"{', '.join(f'{b / 1024:.1f}' for b in moved):<18} "
              f"{', '.join(f'{w / 2**20:.1f}' for w in wrote):<22} "
              f"{', '.join(f'{x:.3f}' for x in secs)}")
        table.append({"ranks": p, "instructions": own, "in_mpi": mpi, "all": [t for t, _, _ in counts],
                      "efficiency": e, "work_efficiency": i1 / sum(own),
                      "comm_bytes": moved, "write_bytes": wrote, "mpi_s": secs})
    if a.json:
        print(json.dumps(table))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
