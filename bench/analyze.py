#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn bench/guest.sh's BENCH lines into results.json, results.md and
PNG plots (gnuplot).

usage: bench/analyze.py --out DIR RAW [RAW...]

Each RAW holds one run's lines: BENCH_INFO {...}, BENCH {...} (one per
measurement, with fio's own JSON inside), BENCH_STARTUP {...} and
BENCH_FLIP {...} (start-up, the write family's workload wc, and the flip
of W6's depth, see their _agg),
BENCH_ERR {...}, BENCH_DONE, and bench/run's BENCH_HOST {...} (the run's
label, the VM's exit status, the host). With several RAW files (bench/run --merge), each table (one disk,
one workload) comes whole from the last run that measured it, and says
which. Every figure is the median over the repetitions of one (disk,
workload, configuration); the repetitions were interleaved in the guest.

What is counted:
- totals: the lower device's own counters (/sys/block/X/stat) over the
  measured window, and fairq's stats (done_reqs, done_bytes) over the same
  window; fio's per-job figures are each over that job's own runtime and
  are never summed into a total (shown beside it only where the two
  disagree by more than 5%).
- per job: its bytes in the window (/proc/TID/io), and its slowdown
  s_i = throughput with the others / throughput alone (the "alone" run of
  its job spec on the same disk and configuration); the guarantee
  G = min_i s_i / (w_i / sum w); Jain's index over s_i / (w_i / sum w)
  (over s_i where the weights are equal) and over the window bytes / w_i.
Targets are printed PASS/MISS; nothing here fails the build.
"""

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys

# The fairq configurations the targets are evaluated for: the defaults
# (the headline) and the recommended tunables.
MIB = 1 << 20
HEADLINE_FQ = "fairq-cfq"
FQ_TARGET_CFGS = ["fairq-cfq", "fairq-cfq-rec"]
CFG_ORDER = ["none", "mq-deadline", "mq-deadline-nr", "bfq", "bfq-nr",
             "bfq-nr-thru", "kyber", "kyber-nr", "iocost", "dm-linear",
             "fairq-fifo", "fairq-cfq", "fairq-sfq", "fairq-cfq-rec",
             "fairq-sfq-rec"]
# Where the -rec tunables were chosen (bench/README.md): their figures
# there are not a score.
TUNING_SET = {("nullb-lat", "w1"), ("nullb-lat", "w2")}
WL_TITLE = {
    "w1": "1: four random 4 KiB readers, iodepth 32 each",
    "w2": "2: synchronous reader (psync, iodepth 1) vs reader at iodepth 32",
    "w3": "3: 4 KiB random reader (iodepth 16) vs 1 MiB sequential reader "
          "(iodepth 4) - byte fairness",
    "w4": "4: readers at best-effort 0, 4, 7 and one idle-class reader "
          "(iodepth 8 each)",
    "w4cg": "4 as cgroups: the same readers, each in its own cgroup with "
            "weight 200, 100, 25 and 1 (io.weight, io.bfq.weight, fairq's "
            "cgroup_weights)",
    "w5": "5: buffered writer (cgroup bench-writer) vs direct 4 KiB reader "
          "(cgroup bench-reader, iodepth 4), ext4",
    "w6qd1": "6: overhead, one 4 KiB random reader, iodepth 1",
    "w6qd32": "6: overhead, one 4 KiB random reader, iodepth 32",
    "w6p4": "6: overhead, four 4 KiB random reader processes, iodepth 8 each",
    "w6qd1u": "6: overhead, one 4 KiB random reader, iodepth 1, io_uring",
    "w6qd32u": "6: overhead, one 4 KiB random reader, iodepth 32, io_uring",
    "w6p4u": "6: overhead, four 4 KiB random reader processes, iodepth 8 "
             "each, io_uring",
}
# Workload 8's bound against bfq: "well below" its CPU per I/O.
ENGAGED_BFQ_MAX = 0.8
W6_WLS = ("w6qd1", "w6qd32", "w6p4", "w6qd1u", "w6qd32u", "w6p4u")
# The write family (guest.sh write_family(), bench/README.md): its
# workloads measured with a window (wc is a start-up, BENCH_STARTUP), the
# fairq configurations its targets are evaluated for, the references of
# its targets, and wd's weights (cgroups bulk1 and bulk4, 1:4).
WF_WLS = ("wa", "wa-lo", "wb", "wd")
WF_TITLE = {
    "wa": "wa: commit log (buffered 4 KiB appends, fdatasync after each) "
          "beside a bulk copy (buffered 1 MiB sequential writes), the "
          "kernel's dirty limits",
    "wa-lo": "wa-lo: wa under lowered dirty limits (vm.dirty_bytes 8 MiB, "
             "background 4 MiB)",
    "wb": "wb: small synchronous random reader (4 KiB, psync, direct, a "
          "file) beside a bulk copy, the kernel's dirty limits",
    "wd": "wd: two bulk copies in cgroups weighted 1:4 (bulk1 100, bulk4 "
          "400), the kernel's dirty limits",
    "wc": "wc: application start-up (100 small files read cold) beside a "
          "bulk copy, the kernel's dirty limits",
}
WF_FQ_CFGS = ["fairq-cfq", "fairq-cfq@cgroup"]
WF_RAW = ("none", "mq-deadline", "bfq", "kyber")   # the copy-alone target's references
WD_WEIGHTS = {"bulk1": 1, "bulk4": 4}
# Weights of the weighted workloads. Workload 4: fairq's weight per
# best-effort level, 25 x (8 - level) (sched/fq_sched.h); the idle class
# has no weight, so no guarantee: it is reported, not in G or Jain.
# Workload 4 as cgroups: the cgroups' weights (bench/guest.sh CG_WEIGHT).
W4_WEIGHTS = {"be0": 200, "be4": 100, "be7": 25}
W4CG_WEIGHTS = {"be0": 200, "be4": 100, "be7": 25, "idle": 1}
DEVICE_BOUND = ["nullb-lat", "virtio", "nbd", "nullb-lat-mem"]
DISAGREE = 0.05     # lower device vs fio sum: shown when further apart


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def base_cfg(c):
    return c.split("@")[0].split(":")[0]


def is_fairq(c):
    return c.startswith("fairq")


def is_sweep(c):
    return ":depth=" in c


def sweep_depth(c):
    return int(c.split(":depth=")[1].split(",")[0])


def is_alone(wl):
    """The alone runs: "alone" (every spec in one fio, fio's figures) and
    the write family's "alone-SPEC" (one spec with a window)."""
    return wl == "alone" or wl.startswith("alone-")


def is_wf(wl):
    return wl in WF_WLS


def is_copy(spec):
    return (spec or "").startswith("wcopy")


def cfg_key(c):
    b = base_cfg(c)
    return (CFG_ORDER.index(b) if b in CFG_ORDER else 99,
            sweep_depth(c) if is_sweep(c) else 0, c)


def wl_threads(w):
    """N of a workload of N threads (w7-N, w8-N), else 0."""
    return int(w[3:]) if w[:3] in ("w7-", "w8-") else 0


def wl_key(w):
    if wl_threads(w):
        return (int(w[1]), wl_threads(w))
    order = ["w1", "w2", "w3", "w4", "w4cg", "w5", *W6_WLS, *WF_WLS]
    return (order.index(w) if w in order else 50, 0)


def jain(xs):
    xs = [x for x in xs if x is not None]
    if not xs or sum(xs) <= 0:
        return None
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


def weights(wl, names):
    """name -> weight, for the jobs that have a guarantee."""
    if wl == "w4":
        return {n: W4_WEIGHTS[n] for n in names if n in W4_WEIGHTS}
    if wl == "w4cg":
        return {n: W4CG_WEIGHTS[n] for n in names if n in W4CG_WEIGHTS}
    if wl == "wd":
        return {n: WD_WEIGHTS[n] for n in names if n in WD_WEIGHTS}
    return {n: 1 for n in names}


def fmt(v, nd=0, unit=""):
    if v is None:
        return "-"
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return "inf" if v > 0 else "-"
    if nd == 0:
        return f"{v:,.0f}{unit}"
    return f"{v:,.{nd}f}{unit}"


def parse_size(s):
    s = str(s or "4k").strip().lower()
    mult = {"k": 1024, "m": MIB, "g": 1 << 30}
    if s and s[-1] in mult:
        return int(float(s[:-1]) * mult[s[-1]])
    return int(s) if s.isdigit() else 4096


# ---------------------------------------------------------------- parsing

def pct_us(pct, q):
    """Percentile q of one of fio's "percentile" tables (ns), in us."""
    for k, v in (pct or {}).items():
        if abs(float(k) - q) < 1e-6:
            return v / 1000.0
    return None


def job_figures(job):
    """One fio job's figures (read and write summed; latency of the
    direction that moved more bytes; with fsync or fdatasync, fio's "sync"
    section: the latency of each sync call)."""
    rd, wr = job.get("read", {}), job.get("write", {})
    main = rd if rd.get("io_bytes", 0) >= wr.get("io_bytes", 0) else wr
    clat = main.get("clat_ns", {})
    pct = clat.get("percentile", {}) or {}
    runtime_ms = max(rd.get("runtime", 0), wr.get("runtime", 0))
    io_bytes = rd.get("io_bytes", 0) + wr.get("io_bytes", 0)
    ios = rd.get("total_ios", 0) + wr.get("total_ios", 0)
    slat = (job.get("sync") or {}).get("lat_ns") or {}
    spct = slat.get("percentile") or {}

    def p(q):
        return pct_us(pct, q)

    opts = job.get("job options", {}) or {}
    return {
        "name": job.get("jobname"),
        "error": job.get("error", 0),
        "ioprio": opts.get("prio"),
        "bs": parse_size(opts.get("bs")),
        "io_bytes": io_bytes,
        "ios": ios,
        "runtime_ms": runtime_ms,
        "iops": rd.get("iops", 0) + wr.get("iops", 0),
        "bw_bytes": rd.get("bw_bytes", 0) + wr.get("bw_bytes", 0),
        "clat_mean_us": clat.get("mean", 0) / 1000.0 if clat else None,
        "p50_us": p(50), "p90_us": p(90), "p99_us": p(99),
        "p999_us": p(99.9),
        "usr_cpu": job.get("usr_cpu"), "sys_cpu": job.get("sys_cpu"),
        "sync_n": slat.get("N") if slat else None,
        "sync_mean_us": slat["mean"] / 1000.0 if slat.get("mean") is not None else None,
        "sync_p50_us": pct_us(spct, 50), "sync_p99_us": pct_us(spct, 99),
        "sync_max_us": slat["max"] / 1000.0 if slat.get("max") is not None else None,
        "_bins": clat.get("bins"),
    }


def parse(paths):
    """Every RAW file's lines; each measurement is tagged with its run."""
    runs, meas, errs = [], [], []
    for i, path in enumerate(paths):
        run = {"label": os.path.basename(path), "info": {}, "done": None,
               "host": {}, "index": i, "startup": [], "flip": []}
        with open(path, errors="replace") as f:
            for line in f:
                tag, _, rest = line.partition(" ")
                if not tag.startswith("BENCH"):
                    continue
                try:
                    obj = json.loads(rest) if rest.strip() else {}
                except json.JSONDecodeError as e:
                    print(f"analyze: unreadable {tag} line ({e})", file=sys.stderr)
                    continue
                if tag == "BENCH_INFO":
                    run["info"] = obj
                elif tag == "BENCH_HOST":
                    run["host"] = obj
                    run["label"] = obj.get("run", run["label"])
                elif tag == "BENCH_ERR":
                    obj["run"] = i
                    errs.append(obj)
                elif tag == "BENCH_DONE":
                    run["done"] = obj
                elif tag == "BENCH_STARTUP":
                    run["startup"].append(obj)
                elif tag == "BENCH_FLIP":
                    run["flip"].append(obj)
                elif tag == "BENCH":
                    m = measurement(obj)
                    if m.get("missing_jobs"):
                        # a fio's output was lost: left out, listed
                        why = ("no fio output for job(s) "
                               + ", ".join(m["missing_jobs"]))
                        print(f"analyze: {m['dev']} {m['wl']} {m['cfg']} "
                              f"rep {m['rep']}: {why}; left out", file=sys.stderr)
                        errs.append({k: m[k] for k in ("dev", "wl", "cfg", "rep")}
                                    | {"why": why, "run": i})
                        continue
                    m["run"] = i
                    meas.append(m)
        runs.append(run)
    return runs, meas, errs


def measurement(obj):
    jobs = []
    for fj in obj.get("fio", []):
        for job in fj.get("jobs", []):
            jobs.append(job_figures(job))
    # numjobs=N gives N jobs of one name: number them.
    names = [j["name"] for j in jobs]
    if len(set(names)) < len(names):
        seen = {}
        for j in jobs:
            k = j["name"]
            j["name"] = f"{k}.{seen.get(k, 0)}"
            seen[k] = seen.get(k, 0) + 1
    specs = dict(e.split(":", 1) for e in (obj.get("specs") or "").split()
                 if ":" in e)
    for j in jobs:
        j["spec"] = specs.get(j["name"].split(".")[0])
    have = {j["name"].split(".")[0] for j in jobs}
    missing = [n for n in specs if n not in have]
    win = obj.get("win", {}) or {}
    m = {k: obj.get(k) for k in ("dev", "cfg", "wl", "rep", "rc", "wall_s",
                                 "lower", "target", "args", "err")}
    m["win"] = win
    m["fairq_stats"] = obj.get("fairq", {}) or {}
    m["slab"] = obj.get("slab", "")
    m["jobs"] = jobs
    m["w5_cgroups"] = obj.get("w5_cgroups", "")
    window_bytes(m, obj.get("procio"), obj.get("cgprocs", ""))
    ms = win.get("ms") or 0
    wf_window(m, obj.get("wf"), ms, obj.get("fairq0") or {})
    nio = (win.get("reads", 0) or 0) + (win.get("writes", 0) or 0)
    nbytes = ((win.get("rsect", 0) or 0) + (win.get("wsect", 0) or 0)) * 512
    m["lower_iops"] = nio * 1000.0 / ms if ms else None
    m["lower_mib_s"] = nbytes / MIB * 1000.0 / ms if ms else None
    m["lower_write_mib_s"] = ((win.get("wsect", 0) or 0) * 512 / MIB
                              * 1000.0 / ms) if ms else None
    m["cpu_ms"] = win.get("cpu_ms")
    m["cpu_us_per_io"] = (win["cpu_ms"] * 1000.0 / nio
                          if nio and win.get("cpu_ms") is not None else None)
    # fairq's own count of what it completed in the window.
    f0, f1 = obj.get("fairq0") or {}, m["fairq_stats"]
    m["fq_iops"] = m["fq_mib_s"] = None
    # (a window cut short leaves a stats file read half-way: both keys)
    if ms and all(k in f for f in (f0, f1) for k in ("done_reqs", "done_bytes")):
        m["fq_iops"] = (f1["done_reqs"] - f0["done_reqs"]) * 1000.0 / ms
        m["fq_mib_s"] = ((f1["done_bytes"] - f0["done_bytes"]) / MIB
                         * 1000.0 / ms)
    # fio's sum of per-job rates: for comparison only, never the total.
    m["fio_sum_iops"] = sum(j["iops"] for j in jobs)
    m["fio_sum_mib_s"] = sum(j["bw_bytes"] for j in jobs) / MIB
    # Each job's throughput: its bytes in the window; fio's own rate only
    # where the window did not record it (and for the alone runs, whose
    # jobs run one after the other, each alone for its whole runtime).
    for j in jobs:
        if m["wl"] != "alone" and j.get("win_bytes") is not None and ms:
            j["tput"], j["tput_src"] = (j["win_bytes"] * 1000.0 / ms,
                                        j.get("win_src", "window"))
        elif j.get("win_src") == "gone":
            # (its processes exited before the window closed)
            j["tput"], j["tput_src"] = None, "gone"
        else:
            j["tput"], j["tput_src"] = float(j["bw_bytes"]), "fio"
    m["missing_jobs"] = missing
    if not missing:
        derive_fairness(m)
    return m


def window_bytes(m, procio, cgprocs):
    """Each job's bytes within the sampler's window, from the fio tasks'
    /proc/TID/io read_bytes + write_bytes at its start and end. Jobs of a
    cgroup workload (one fio per job, in cgroup bench-NAME) are the tasks
    of the processes that were in that cgroup (cgprocs "NAME:PID,PID ...");
    the others are the last len(jobs) task ids in creation order (fio's
    main process and its helper thread come first)."""
    for j in m["jobs"]:
        j["win_bytes"] = None
    if not procio or len(procio) < 2 or not procio[1]:
        return

    def table(text):
        t = {}
        for e in text.split():
            f = e.split(":")
            if len(f) == 4:
                t[(int(f[0]), int(f[1]))] = (int(f[2]), int(f[3]))
        return t

    a, b = table(procio[0]), table(procio[1])
    delta = {}
    for key, (rb, wb) in b.items():
        ra, wa = a.get(key, (0, 0))
        delta[key] = rb - ra + wb - wa
    jobs = m["jobs"]
    if cgprocs:
        members = {}
        for e in cgprocs.split():
            name, _, pids = e.partition(":")
            members[name] = {int(p) for p in pids.split(",") if p}
        for j in jobs:
            pids = members.get(j["name"])
            if pids:
                j["win_bytes"] = sum(d for (pid, _), d in delta.items()
                                     if pid in pids)
        return
    tids = sorted({k[1] for k in set(a) | set(b)})
    if len(tids) < len(jobs):
        return
    bytid = {k[1]: d for k, d in delta.items()}
    for j, tid in zip(jobs, tids[-len(jobs):]):
        j["win_bytes"] = bytid.get(tid)


CGIO_FIELDS = ("rb", "wb", "dirty", "writeback", "srb", "swb")


def parse_cgio(text):
    """guest.sh cgio(): "NAME:rb:wb:dirty:writeback:srb:swb ..." ->
    {NAME: (rb, wb, dirty, writeback, srb, swb)}: the bytes its processes
    read and dirtied (/proc/PID/io), its memcg's dirty and writeback
    page-cache bytes, what its io.stat counted submitted to the lower
    device."""
    out = {}
    for e in (text or "").split():
        f = e.split(":")
        if len(f) == 7:
            try:
                out[f[0]] = tuple(int(x) for x in f[1:])
            except ValueError:
                pass
    return out


def flow_table(text_lines):
    """fairq's stats flow lines -> {key: {field: int or str}}."""
    out = {}
    for ln in text_lines or []:
        # "KEY class=be level=4 ..." (stats_json keeps what follows "flow")
        parts = ln.split()
        if not parts:
            continue
        d = {}
        for p in parts:
            k, eq, v = p.partition("=")
            if eq:
                d[k] = int(v) if v.isdigit() else v
        key = d.get("key")
        if key is not None:
            out[key] = d
    return out


def cg_delta(wf):
    """{NAME: {field: change over the window}} of a wf object's cgio pair;
    "gone": the cgroup's processes had exited by the window's end (their
    /proc/PID/io with them: no figure)."""
    pair = wf.get("cgio") or ["", ""]
    a, b = parse_cgio(pair[0]), parse_cgio(pair[-1])
    out = {}
    for n, v in b.items():
        v0 = a.get(n, (0,) * 6)
        d = dict(zip(CGIO_FIELDS, (y - x for x, y in zip(v0, v))))
        d["gone"] = d["rb"] + d["wb"] < 0
        out[n] = d
    return out


def written(d):
    """What of a cgroup's writes reached the disk over the window: the
    bytes its processes dirtied less the growth of its dirty and writeback
    pages (a page dirtied again before it was written counts once)."""
    return d["wb"] - d["dirty"] - d["writeback"]


def wf_window(m, wf, ms, fairq0):
    """The write family's figures of one measurement (guest.sh wf_json).
    Each job's cgroup is read at the window's ends with the lower device's
    counters (cgio()). A job that is no copy: its processes' read and
    write bytes (a commit's appends are written by its own fdatasync). A
    copy: the lower device's writes in the window that are no other job's
    data, split between several copies in proportion to the page
    writeback each completed (written(); by what each dirtied if neither
    completed any). The copy's data is what the disk writes there (the
    journal's few blocks too); no per-cgroup figure is its rate by itself:
    io.stat counts bios at submission (hundreds of MiB ahead of the disk,
    and under data=ordered jbd2 writes the copy's data as root), what it
    dirtied follows its dirty pages' growth, and ext4 ends a page's
    writeback only once its unwritten extent is converted, under a
    journal handle, so completions come in bursts: a copy alone can
    complete none in a window where the disk wrote 32 MiB of it. Those
    three are kept per job as diagnostics. Also the dirty pages at the
    window's ends, the teardown, fairq's flows over the window."""
    m["wf"] = None
    if not wf:
        return
    cg = cg_delta(wf)
    info = {k: wf.get(k) for k in ("fs", "dirty", "sysctl", "queue", "start_ms",
                                   "rm_ms", "drain_ms", "cgids", "flow_names")}
    info["cgio"] = cg
    vm = [[int(x) for x in v.split()] for v in (wf.get("vm") or []) if v.strip()]
    info["vm"] = vm
    info["pool_delta"] = ((vm[1][0] + vm[1][1] - vm[0][0] - vm[0][1]) * 4096
                          if len(vm) == 2 else None)
    lower_w = (m["win"].get("wsect") or 0) * 512
    others, copies = 0, []
    for j in m["jobs"]:
        d = cg.get(j["name"])
        if not d:
            continue
        j["submitted_bytes"] = d["srb"] + d["swb"]
        if d["gone"]:
            j["win_bytes"], j["win_src"] = None, "gone"
            continue
        if is_copy(j.get("spec")):
            j["dirtied_bytes"], j["completed_bytes"] = d["wb"], written(d)
            copies.append((j, d))
        else:
            j["win_bytes"], j["win_src"] = d["rb"] + d["wb"], "cgroup"
            others += d["wb"]
    if copies:
        pool = max(0, lower_w - others)
        ws = [max(0, written(d)) for _, d in copies]
        if not sum(ws):
            ws = [max(0, d["wb"]) for _, d in copies]
        if not sum(ws):
            ws = [1] * len(copies)
        for (j, _), w in zip(copies, ws):
            j["win_bytes"], j["win_src"] = pool * w / sum(ws), "lower device"
    # A commit that completed no fdatasync after fio's ramp (fio has no
    # sample): its p99 is at least the window, and is shown as such.
    for j in m["jobs"]:
        if j.get("spec") == "wsync4k" and not j.get("sync_n") and ms:
            j["sync_p99_us"] = j["sync_p50_us"] = ms * 1000.0
            j["sync_censored"] = True
    m["wf"] = info
    f0 = flow_table(fairq0.get("flow_lines"))
    f1 = flow_table(m["fairq_stats"].get("flow_lines"))
    names = dict(e.split("=", 1) for e in (wf.get("flow_names") or "").split(";")
                 if "=" in e)
    cgids = {v: k for k, _, v in (e.partition("=") for e in
                                  (wf.get("cgids") or "").split())}
    flows = []
    for key, d in f1.items():
        d0 = f0.get(key)
        # a flow freed when it drained and made again has counters anew
        fresh = not d0 or any(d0.get(k, 0) > d.get(k, 0)
                              for k in ("reqs", "bytes", "wait_ns_sum"))
        dd = {k: d.get(k, 0) - (0 if fresh else d0.get(k, 0))
              for k in ("reqs", "bytes", "wait_ns_sum")}
        who = names.get(str(key)) or ""
        if "@cgroup" in (m.get("cfg") or ""):
            who = ("cgroup bench-" + cgids[str(key)] if str(key) in cgids
                   else "root cgroup" if key == 1 else "cgroup " + str(key))
        flows.append({"key": key, "who": who, "reqs": dd["reqs"],
                      "bytes": dd["bytes"], "since_window": not fresh,
                      "wait_ms_mean": (dd["wait_ns_sum"] / dd["reqs"] / 1e6
                                       if dd["reqs"] else None),
                      "wait_ms_max": d.get("wait_ns_max", 0) / 1e6,
                      "queued": d.get("queued"), "weight": d.get("weight")})
    flows.sort(key=lambda f: -f["bytes"])
    info["flows"] = flows


def derive_fairness(m):
    """Jain's index over each job's window bytes divided by its weight (the
    jobs with a guarantee), max/min, the light reader's figures."""
    jobs = m["jobs"]
    ws = weights(m["wl"], [j["name"] for j in jobs])
    fair = [j for j in jobs if j["name"] in ws]
    m["jain_fio"] = jain([j["bw_bytes"] / ws[j["name"]] for j in fair]) \
        if len(fair) > 1 else None
    m["jain"], m["win_share"], m["maxmin"] = None, None, None
    if len(fair) > 1 and all(j.get("win_bytes") is not None for j in jobs):
        xs = [j["win_bytes"] / ws[j["name"]] for j in fair]
        m["jain"] = jain(xs)
        lo, hi = min(xs), max(xs)
        m["maxmin"] = hi / lo if lo > 0 else float("inf")
        tot = sum(j["win_bytes"] for j in jobs) or 1
        m["win_share"] = {j["name"]: j["win_bytes"] / tot for j in jobs}
    if m["wl"] in ("w4", "w4cg") and m["win_share"]:
        be_tot = sum(m["win_share"][n] for n in W4_WEIGHTS) or 1
        wsum = sum(W4_WEIGHTS.values())
        m["w4_dev"] = {n: (m["win_share"][n] / be_tot)
                       / (W4_WEIGHTS[n] / wsum) - 1 for n in W4_WEIGHTS}
    if m["wl"] == "wd" and m["win_share"]:
        wsum = sum(WD_WEIGHTS.values())
        m["wd_dev"] = {n: m["win_share"][n] / (WD_WEIGHTS[n] / wsum) - 1
                       for n in WD_WEIGHTS if n in m["win_share"]}
    # What counting noise alone gives: each of n jobs completes a Poisson
    # number of I/Os with mean mu, so E[Jain] ~ 1 / (1 + 1/mu).
    ios = [j["ios"] for j in jobs]
    mu = sum(ios) / len(ios) if ios else 0
    m["jain_noise"] = 1 / (1 + 1 / mu) if mu > 0 else None
    m["ios_per_job"] = mu
    light = next((j for j in jobs if j["name"] in ("light", "reader")), None)
    m["light_p50_us"] = light["p50_us"] if light else None
    m["light_p99_us"] = light["p99_us"] if light else None
    m["light_share"] = (m["win_share"] or {}).get(light["name"]) if light else None


def slowdown(m, alone_tput):
    """s_i, G and Jain over the weight-normalised s_i; alone_tput(spec)
    is the job spec's throughput alone (bytes/s) or None."""
    jobs = m["jobs"]
    m["slowdown"], m["G"], m["jain_s"], m["s_sum"] = {}, None, None, None
    m["alone"] = {}
    if len(jobs) < 2 or wl_threads(m["wl"]):
        return
    for j in jobs:
        a = alone_tput(j["spec"]) if j.get("spec") else None
        if a and j["tput"] is not None:
            m["slowdown"][j["name"]] = j["tput"] / a
            m["alone"][j["name"]] = a
    if len(m["slowdown"]) == len(jobs):
        m["s_sum"] = sum(m["slowdown"].values())
    ws = weights(m["wl"], [j["name"] for j in jobs])
    if not ws or any(n not in m["slowdown"] for n in ws):
        return
    wsum = sum(ws.values())
    norm = [m["slowdown"][n] / (w / wsum) for n, w in ws.items()]
    m["G"] = min(norm)
    m["jain_s"] = jain(norm)


# ------------------------------------------------------------ aggregation

def select_runs(meas):
    """With several runs: each table (disk, workload; the alone runs of
    each disk and configuration) from the last run that measured it. Returns the
    kept measurements and {(dev, wl): run index}."""
    def key(m):
        return (m["dev"], m["wl"] + ":" + m["cfg"] if is_alone(m["wl"]) else m["wl"])

    src = {}
    for m in meas:
        src[key(m)] = max(src.get(key(m), -1), m["run"])
    return [m for m in meas if src[key(m)] == m["run"]], src


def alone_table(meas, what="tput"):
    """(dev, cfg, spec) -> bytes/s alone (median over the alone runs); or
    another of the job's figures (what), or "lower_write_mib_s", the lower
    device's writes in an alone-SPEC run's window."""
    acc = {}
    for m in meas:
        if not is_alone(m["wl"]) or m["rc"]:
            continue
        for j in m["jobs"]:
            v = m.get(what) if what == "lower_write_mib_s" else j.get(what)
            acc.setdefault((m["dev"], m["cfg"], j.get("spec") or j["name"]), []).append(v)
    return {k: median(v) for k, v in acc.items()}


def alone_cfg(c):
    """The configuration whose alone runs are c's reference: its own, or
    for a depth sweep's fixed depth the configuration it varies (the
    sweep has no alone runs of its own)."""
    return c.split(":depth=")[0] if is_sweep(c) else c


def apply_slowdown(meas):
    alone = alone_table(meas)
    for m in meas:
        if not is_alone(m["wl"]):
            slowdown(m, lambda spec, m=m: alone.get(
                (m["dev"], alone_cfg(m["cfg"]), spec)))
    return alone


AGG_KEYS = ("lower_iops", "lower_mib_s", "lower_write_mib_s", "fq_iops",
            "fq_mib_s", "fio_sum_iops", "fio_sum_mib_s", "jain", "jain_fio",
            "jain_s", "G", "maxmin", "light_p50_us", "light_p99_us",
            "light_share", "cpu_us_per_io", "cpu_ms", "jain_noise",
            "ios_per_job", "s_sum")


def aggregate(meas):
    groups = {}
    for m in meas:
        if is_alone(m["wl"]):
            continue
        groups.setdefault((m["dev"], m["wl"], m["cfg"]), []).append(m)
    agg = {}
    for key, ms in groups.items():
        a = {"n": len(ms), "reps": [m["rep"] for m in ms], "run": ms[0]["run"],
             "args": ms[0].get("args")}
        for k in AGG_KEYS:
            a[k] = median([m.get(k) for m in ms])
        names = []
        for m in ms:
            for j in m["jobs"]:
                if j["name"] not in names:
                    names.append(j["name"])
        a["jobs"] = {}
        for n in names:
            js = [j for m in ms for j in m["jobs"] if j["name"] == n]
            a["jobs"][n] = {k: median([j.get(k) for j in js])
                            for k in ("iops", "bw_bytes", "tput", "p50_us",
                                      "p99_us", "sync_p50_us", "sync_p99_us",
                                      "sync_n", "dirtied_bytes")}
            a["jobs"][n]["bs"] = js[0]["bs"]
            a["jobs"][n]["sync_censored"] = any(j.get("sync_censored") for j in js)
            a["jobs"][n]["spec"] = js[0].get("spec")
            a["jobs"][n]["s"] = median([m["slowdown"].get(n) for m in ms
                                        if m.get("slowdown")])
            a["jobs"][n]["alone"] = median([m["alone"].get(n) for m in ms
                                            if m.get("alone")])
        ws = [m["win_share"] for m in ms if m.get("win_share")]
        a["win_share"] = ({n: median([w.get(n) for w in ws]) for n in names}
                          if ws else None)
        if key[1] in ("w4", "w4cg"):
            dv = [m["w4_dev"] for m in ms if m.get("w4_dev")]
            a["w4_dev"] = ({n: median([d.get(n) for d in dv]) for n in W4_WEIGHTS}
                           if dv else None)
        if key[1] == "wd":
            dv = [m["wd_dev"] for m in ms if m.get("wd_dev")]
            a["wd_dev"] = ({n: median([d.get(n) for d in dv]) for n in WD_WEIGHTS}
                           if dv else None)
        wfs = [m["wf"] for m in ms if m.get("wf")]
        if wfs:
            a["wf"] = {k: median([w.get(k) for w in wfs])
                       for k in ("start_ms", "rm_ms", "drain_ms")}
            a["wf"].update({k: wfs[-1].get(k) for k in ("fs", "dirty", "sysctl",
                                                          "queue", "flows")})
            wms = [m for m in ms if m.get("wf") and m["win"].get("ms")]

            def per_s(f, n):
                return median([f(m["wf"]["cgio"][n]) / MIB * 1000.0 / m["win"]["ms"]
                               for m in wms if n in m["wf"]["cgio"]])
            cgn = wfs[-1]["cgio"]
            a["wf"]["written_mib_s"] = {n: per_s(written, n) for n in cgn}
            a["wf"]["submitted_mib_s"] = {n: per_s(lambda d: d["swb"], n) for n in cgn}
            a["wf"]["dirtied_mib_s"] = {n: per_s(lambda d: d["wb"], n) for n in cgn}
            a["wf"]["pool_delta_mib"] = median([m["wf"]["pool_delta"] / MIB for m in wms
                                                if m["wf"].get("pool_delta") is not None])
        a["by_rep"] = {m["rep"]: m.get("lower_iops") for m in ms}
        st = [m["fairq_stats"] for m in ms if m["fairq_stats"]]
        a["fast_only"] = bool(st) and all(fast_only(s) for s in st)
        a["fairq_mem_bytes"] = median([s.get("mem_bytes") for s in st])
        flows = [s.get("flows") for s in st if s.get("flows") is not None]
        a["fairq_flows_max"] = max(flows, default=None)
        a["fairq_per_flow"] = median([s["mem_bytes"] / s["flows"] for s in st
                                      if s.get("flows") and s.get("mem_bytes")])
        a["rc_nonzero"] = sum(1 for m in ms if m["rc"])
        if key[1] == "w5":
            a["w5_cgroups"] = next((m["w5_cgroups"] for m in ms
                                    if m.get("w5_cgroups")), "")
            a["w5_flows"] = [[ln.split()[0] + " " + next(
                (f for f in ln.split() if f.startswith("bytes=")), "")
                for ln in s.get("flow_lines") or []] for s in st]
        agg[key] = a
    return agg


def fast_only(st):
    """fairq's stats say every bio took the fast path: the depth never
    filled."""
    return (st.get("fastpath_stops") == 0 and st.get("fastpath_reqs") is not None
            and st.get("fastpath_reqs") >= (st.get("enq_reqs") or 0))


def flip_agg(runs):
    """{(dev, wl, cfg): figures} of the BENCH_FLIP lines (guest.sh flip():
    one fio run, the depth written a and b in turn, A B B A, the lower
    device's reads counted per window), each from the last run that
    measured it; a line whose run failed (rc) is left out.  "ratio" is the
    median over the A B B A groups of a's rate / b's rate (each group's
    drift cancels), "overall" the rate over all of a's windows / all of
    b's."""
    out = {}
    for r in runs:
        for o in r["flip"]:
            wins = o.get("windows") or []
            if o.get("rc") or not wins or len(wins) % 4:
                continue
            a, b = o["a"], o["b"]

            def rate(ws, d):
                ios = sum(w["ios"] for w in ws if w["depth"] == d)
                us = sum(w["us"] for w in ws if w["depth"] == d)
                return ios * 1e6 / us if us else None
            groups = []
            for g in range(0, len(wins), 4):
                ra, rb = rate(wins[g:g + 4], a), rate(wins[g:g + 4], b)
                if ra is not None and rb:
                    groups.append(ra / rb)
            ra, rb = rate(wins, a), rate(wins, b)
            if not groups or ra is None or not rb:
                continue
            out[(o["dev"], o["wl"], o["cfg"])] = {
                "a": a, "b": b, "ratio": median(groups), "groups": groups,
                "overall": ra / rb, "a_iops": ra, "b_iops": rb,
                "windows": len(wins), "win_s": o.get("win_s"),
                "fast_only": fast_only(o.get("fairq") or {}),
                "run": r["index"]}
    return out


def w6_auto_vs_fixed(agg, add, flips=None):
    """W6QD32 at depth=auto against a fixed depth 32.  Judged by the flip
    measurement when there is one (one fio run, the depth written auto
    and 32 in turn every second: flip_agg()); else by the median of the
    ratios within each repetition of the separate runs (one after the
    other), not by the ratio of medians: under TCG one configuration's
    repetitions spread by a third, which the row then says."""
    fq = HEADLINE_FQ
    name = "W6QD32 auto depth within 1% of fixed depth 32"
    a = agg.get(("nullb-fast", "w6qd32", fq))
    b = agg.get(("nullb-fast", "w6qd32", fq + ":depth=32"))
    f = (flips or {}).get(("nullb-fast", "w6qd32", fq))
    if f and (f["a"], f["b"]) != ("auto", "32"):
        f = None
    sep, med = "", None
    if a and b and a.get("lower_iops") is not None and b.get("lower_iops"):
        pairs = [a["by_rep"][r] / b["by_rep"][r] for r in sorted(a.get("by_rep", {}))
                 if a["by_rep"].get(r) and (b.get("by_rep") or {}).get(r)]
        med = median(pairs)
        if med is None:
            med = a["lower_iops"] / b["lower_iops"]
        sep = (f"{fmt(a['lower_iops'])} vs {fmt(b['lower_iops'])} IOPS (medians); "
               f"within each repetition {med * 100 - 100:+.1f}% (median of "
               + ", ".join(f"{x:.2f}" for x in pairs) + ")")
    if f:
        add(name, fq,
            f"one fio run, the depth written auto and 32 in turn ({f['windows']} "
            f"windows of {f['win_s']} s, A B B A): {fmt(f['a_iops'])} vs "
            f"{fmt(f['b_iops'])} IOPS ({f['overall'] * 100 - 100:+.1f}%); "
            f"median over the groups {f['ratio'] * 100 - 100:+.1f}% ("
            + ", ".join(f"{x:.3f}" for x in f["groups"]) + ")"
            + ("; the fast path carried every bio" if f["fast_only"] else "")
            + (f"; separate runs: {sep}" if sep else ""),
            f["ratio"] >= 0.99)
        return
    if med is None:
        return
    why = ""
    if a.get("fast_only") and b.get("fast_only"):
        why = ("; the fast path carried every bio in both (it never stopped): "
               "the depth never filled in either, both ran the same code, "
               "and the gap is run-to-run noise")
    add(name, fq, sep + why, med >= 0.99)


def get(agg, dev, wl, cfg, k):
    a = agg.get((dev, wl, cfg))
    return a.get(k) if a else None


def ratio(x, y):
    if x is None or y is None or y == 0:
        return None
    return x / y


def tput_unit(wl):
    return "MiB/s" if wl in ("w3", "w5") or is_wf(wl) else "IOPS"


def total(a, wl):
    """The table's total: the lower device's own count over the window."""
    return a["lower_mib_s"] if tput_unit(wl) == "MiB/s" else a["lower_iops"]


FILLS_ALONE = ("w1", "w3", "w4")     # every job can fill the disk alone


def fair_ceiling(a, wl):
    """What a fair schedule reaches in total (in the unit of total()): each
    job gets its weight share of the disk's time, so it moves that share
    of what it moves alone. The disk's time is 1, or what a's own run used
    if more (the sum of its s_i: a disk with two separate limits, such as
    IOPS and bytes/s, can pass 1). From the job specs' alone runs of the
    same configuration; None if one is missing or the workload is not
    FILLS_ALONE."""
    jobs = a.get("jobs") or {}
    ws = weights(wl, list(jobs))
    if wl not in FILLS_ALONE or not ws:
        return None
    per = []
    for n, w in ws.items():
        t = jobs[n].get("alone")
        if not t:
            return None
        per.append((w, t / MIB if tput_unit(wl) == "MiB/s" else t / jobs[n]["bs"]))
    wsum = sum(w for w, _ in per)
    time = max(1.0, a.get("s_sum") or 1.0)
    return time * sum(w / wsum * t for w, t in per)


def fio_sum(a, wl):
    return a["fio_sum_mib_s"] if tput_unit(wl) == "MiB/s" else a["fio_sum_iops"]


def disagrees(a, wl):
    t, f = total(a, wl), fio_sum(a, wl)
    return t is not None and f is not None and t > 0 and abs(f / t - 1) > DISAGREE


def competitors(agg, dev, wl):
    return [k[2] for k in agg if k[0] == dev and k[1] == wl
            and not is_fairq(k[2])]


def floor_cfgs(agg, dev, wl):
    """The throughput target's references: none and mq-deadline."""
    return [c for c in competitors(agg, dev, wl)
            if base_cfg(c).startswith("mq-deadline") or base_cfg(c) == "none"]


def best(agg, dev, wl, cfgs, val, low=False):
    """(cfg, value) of the configuration among cfgs with the best val(a)."""
    cand = [(c, val(agg[(dev, wl, c)])) for c in cfgs]
    cand = [(c, v) for c, v in cand if v is not None]
    if not cand:
        return None, None
    return (min if low else max)(cand, key=lambda cv: cv[1])


def tuning(dev, wl, cfg):
    return cfg.endswith("-rec") and (dev, wl) in TUNING_SET


# ---------------------------------------------------------------- targets

def targets(agg, flips=None):
    """[(target, config, figure text, PASS/MISS/n/a)]: fairq's defaults
    and the -rec set (not on the tuning set), against the competitor
    configuration that did best on the same disk and workload.  The
    targets are those of the fair-by-default work (bench/README.md,
    "Targets"): a guarantee G >= 0.9 on W1-W4, Jain over the slowdowns
    >= 0.95 where every job can fill the disk alone (W1, W3, W4), W4's
    shares within 10 % of the weights, W2's light reader p99 <= 1/3 of
    mq-deadline's on virtio and nbd, and the lower device's total >= 95 %
    of the best of none and mq-deadline on W1-W4."""
    out = []
    devs = sorted({k[0] for k in agg})
    bound = [d for d in DEVICE_BOUND if d in devs]

    def add(name, cfg, text, ok):
        out.append((name, cfg, text,
                    "n/a" if ok is None else ("PASS" if ok else "MISS")))

    def scored(d, wl, fq, ok):
        return None if tuning(d, wl, fq) else ok

    def note(d, wl, fq):
        return "; tuning set, not scored" if tuning(d, wl, fq) else ""

    def mqd(d, wl):
        return [c for c in competitors(agg, d, wl) if base_cfg(c).startswith("mq-deadline")]

    for fq in FQ_TARGET_CFGS:
        for d in bound:
            for wl in ("w1", "w2", "w3", "w4"):
                g = get(agg, d, wl, fq, "G")
                if g is not None:
                    bc, bg = best(agg, d, wl, competitors(agg, d, wl), lambda a: a["G"])
                    add(f"W{wl[1]} G >= 0.9 ({d})", fq,
                        f"{fq} G {fmt(g, 2)}; best competitor {bc} {fmt(bg, 2)}"
                        + note(d, wl, fq), scored(d, wl, fq, g >= 0.9))
                js = get(agg, d, wl, fq, "jain_s")
                if js is not None and wl != "w2":
                    bc, bj = best(agg, d, wl, competitors(agg, d, wl),
                                  lambda a: a["jain_s"])
                    add(f"W{wl[1]} Jain over s_i >= 0.95 ({d})", fq,
                        f"{fq} {fmt(js, 3)}; best competitor {bc} {fmt(bj, 3)}"
                        + note(d, wl, fq), scored(d, wl, fq, js >= 0.95))
                a_fq = agg.get((d, wl, fq))
                tf = total(a_fq, wl) if a_fq else None
                bc, tm = best(agg, d, wl, floor_cfgs(agg, d, wl), lambda a: total(a, wl))
                if tf is not None and tm:
                    nd = 1 if tput_unit(wl) == "MiB/s" else 0
                    ceil = fair_ceiling(agg[(d, wl, bc)], wl)
                    bar = tm if ceil is None else min(tm, ceil)
                    why = ""
                    if ceil is not None and ceil < tm:
                        why = (f"; a fair schedule (each job its weight share of "
                               f"the disk's time) reaches {fmt(ceil, nd)} "
                               f"({tf / ceil * 100:.0f}% of it), from "
                               f"{bc}'s alone runs; disk time used, sum of s_i: "
                               f"{fmt(a_fq.get('s_sum'), 2)} vs {bc} "
                               f"{fmt(agg[(d, wl, bc)].get('s_sum'), 2)}")
                    add(f"W{wl[1]} total >= 95% of none/mq-deadline's"
                        + (", or of a fair schedule's" if wl in FILLS_ALONE else "")
                        + f" ({d})", fq,
                        f"{fmt(tf, nd)} vs {bc} {fmt(tm, nd)} "
                        f"{tput_unit(wl)}, lower device "
                        f"({tf / tm * 100:.0f}%)" + why + note(d, wl, fq),
                        scored(d, wl, fq, tf >= 0.95 * bar))
            dv = get(agg, d, "w4", fq, "w4_dev")
            if dv and all(v is not None for v in dv.values()):
                worst = max(abs(v) for v in dv.values())
                add(f"W4 shares within 10% of weights 8:4:1 ({d})", fq,
                    ", ".join(f"{n} {v * 100:+.0f}%" for n, v in dv.items()),
                    worst <= 0.10)
            pf = get(agg, d, "w2", fq, "light_p99_us")
            bc, pm = best(agg, d, "w2", mqd(d, "w2"), lambda a: a["light_p99_us"], low=True)
            if pf is not None and pm:
                ok = pf <= pm / 3 if d in ("virtio", "nbd") else None
                add(f"W2 light p99 <= 1/3 of mq-deadline's ({d})", fq,
                    f"{fmt(pf)} us vs {bc} {fmt(pm)} us (ratio {pf / pm:.2f})"
                    + ("" if ok is not None else "; shown, a target on virtio and nbd")
                    + note(d, "w2", fq), scored(d, "w2", fq, ok))
    # Workload 5: the writer's and the reader's cgroups (classify=cgroup).
    # Fairness as on W1-W4, over the slowdowns: a 1 MiB writer and a 4 KiB
    # reader that share the disk's time get very different bytes, so Jain
    # over bytes is shown, not scored (it was the target until the default
    # became fairness=time).
    for d in bound:
        cfg = HEADLINE_FQ + "@cgroup"
        jf = get(agg, d, "w5", cfg, "jain_s")
        if jf is None:
            continue
        bc, bj = best(agg, d, "w5", competitors(agg, d, "w5"), lambda a: a["jain_s"])
        add(f"W5 Jain over s_i >= 0.95, writer vs reader by cgroup ({d})", cfg,
            f"{cfg} {fmt(jf, 3)} (G {fmt(get(agg, d, 'w5', cfg, 'G'), 2)}, "
            f"Jain over bytes {fmt(get(agg, d, 'w5', cfg, 'jain'), 3)}); "
            f"best competitor {bc} {fmt(bj, 3)}", jf >= 0.95)
    fq = HEADLINE_FQ
    for wl in W6_WLS:
        i_fq = get(agg, "nullb-fast", wl, fq, "lower_iops")
        i_dm = get(agg, "nullb-fast", wl, "dm-linear", "lower_iops")
        c_fq = get(agg, "nullb-fast", wl, fq, "cpu_us_per_io")
        c_dm = get(agg, "nullb-fast", wl, "dm-linear", "cpu_us_per_io")
        if i_fq is not None and i_dm:
            add(f"{wl.upper()} IOPS >= 97% of dm-linear's", fq,
                f"{fmt(i_fq)} vs {fmt(i_dm)} ({i_fq / i_dm * 100:.0f}%)",
                i_fq >= 0.97 * i_dm)
        if c_fq is not None and c_dm:
            add(f"{wl.upper()} CPU per I/O within 5% of dm-linear's", fq,
                f"{c_fq:.0f} vs {c_dm:.0f} us/IO ({(c_fq / c_dm - 1) * 100:+.0f}%)",
                c_fq <= 1.05 * c_dm)
    w6_auto_vs_fixed(agg, add, flips)
    engaged_targets(agg, add)
    w7cfgs = sorted({k[2] for k in agg if k[1].startswith("w7-")}, key=cfg_key)
    for cfg in w7cfgs:
        for d in devs:
            ns = [int(k[1][3:]) for k in agg
                  if k[0] == d and k[2] == cfg and k[1].startswith("w7-")]
            big = max(ns, default=16)
            if big <= 16:
                continue
            wb = f"w7-{big}"
            j16 = get(agg, d, "w7-16", cfg, "jain")
            jb = get(agg, d, wb, cfg, "jain")
            nb = get(agg, d, wb, cfg, "jain_noise")
            t16 = get(agg, d, "w7-16", cfg, "lower_iops")
            tb = get(agg, d, wb, cfg, "lower_iops")
            if None in (j16, jb, t16, tb):
                continue
            ok = (jb >= 0.95 * j16 and tb >= 0.95 * t16) if is_fairq(cfg) else None
            per = get(agg, d, wb, cfg, "fairq_per_flow")
            add(f"W7 {big:,} vs 16 flows within 5% ({d})", cfg,
                f"Jain {jb:.3f} vs {j16:.3f} (counting noise alone at "
                f"{big:,}: {fmt(nb, 3)}), lower IOPS {fmt(tb)} vs "
                f"{fmt(t16)} ({tb / t16 * 100:.0f}%)"
                + (f", fairq {fmt(per)} bytes per flow" if per else ""), ok)
    return out


def engaged_targets(agg, add):
    """Workload 8 (bench/README.md): with every bio scheduled (fast path
    off), fairq's CPU per I/O at N flows at most mq-deadline's on the disk
    itself, and at most ENGAGED_BFQ_MAX of bfq's."""
    fq = HEADLINE_FQ + "@pid:fastpath=off"
    for wl in sorted({k[1] for k in agg if k[1].startswith("w8-")}, key=wl_key):
        c_fq = get(agg, "nullb-fast", wl, fq, "cpu_us_per_io")
        i_fq = get(agg, "nullb-fast", wl, fq, "lower_iops")
        if c_fq is None:
            continue
        for ref, bound in (("mq-deadline", 1.0), ("bfq", ENGAGED_BFQ_MAX)):
            c_ref = get(agg, "nullb-fast", wl, ref, "cpu_us_per_io")
            i_ref = get(agg, "nullb-fast", wl, ref, "lower_iops")
            if not c_ref:
                continue
            add(f"W8 {wl_threads(wl):,} flows: CPU per I/O <= "
                f"{'' if bound == 1.0 else f'{bound:g} x '}{ref}'s", fq,
                f"{c_fq:.1f} vs {c_ref:.1f} us/IO ({c_fq / c_ref:.2f}x); "
                f"IOPS {fmt(i_fq)} vs {fmt(i_ref)}", c_fq <= bound * c_ref)
    # Workload 7 at its largest N engages the scheduler too (1,024 flows,
    # a depth of at most 32): its CPU per I/O against mq-deadline's.
    fq7 = HEADLINE_FQ + "@pid"
    for (d, wl, cfg) in sorted(k for k in agg if k[1].startswith("w7-")
                               and k[2] == fq7 and wl_threads(k[1]) >= 1024):
        c_fq = get(agg, d, wl, cfg, "cpu_us_per_io")
        c_ref = get(agg, d, wl, "mq-deadline", "cpu_us_per_io")
        if c_fq is None or not c_ref:
            continue
        add(f"W7 {wl_threads(wl):,} flows: CPU per I/O <= mq-deadline's ({d})", cfg,
            f"{c_fq:.1f} vs {c_ref:.1f} us/IO ({c_fq / c_ref:.2f}x)", c_fq <= c_ref)


# ----------------------------------------------------- the write family

def write_targets(agg, wcs, alone_lw):
    """The write family's targets (bench/README.md), for fairq-cfq and
    fairq-cfq@cgroup on each disk that ran the family: wa, wa-lo, wb and
    wc: G >= 0.9 and the lower device's total >= 95% of mq-deadline's;
    wa and wa-lo: the commit's fsync p99 <= 1/3 of mq-deadline's and of
    bfq's; wd: each copy's share of the bytes within 10% of its weight's
    (1:4); a buffered copy alone through fairq: the lower device's
    writes >= 95% of the best raw scheduler's (none, mq-deadline, bfq,
    kyber). alone_lw: (dev, cfg, spec) -> the lower device's write MiB/s
    in the spec's alone run."""
    out = []

    def add(name, cfg, text, ok):
        out.append((name, cfg, text,
                    "n/a" if ok is None else ("PASS" if ok else "MISS")))

    devs = sorted({k[0] for k in agg if is_wf(k[1])} | {k[0] for k in wcs}
                  | {k[0] for k in alone_lw if is_copy(k[2])})
    for d in devs:
        for fq in WF_FQ_CFGS:
            for wl in WF_WLS:
                a = agg.get((d, wl, fq))
                if not a:
                    continue
                W = wl.upper()
                comp = competitors(agg, d, wl)
                note = ("; fairq's defaults key flows by process: the cgroups' "
                        "weights are not its" if wl == "wd" and "@cgroup" not in fq
                        else "")
                if wl != "wd" and a.get("G") is not None:
                    bc, bg = best(agg, d, wl, comp, lambda x: x["G"])
                    ss = ", ".join(f"{n} s {fmt(j.get('s'), 2)}"
                                   for n, j in a["jobs"].items())
                    add(f"{W} G >= 0.9 ({d})", fq,
                        f"G {fmt(a['G'], 2)} ({ss}); best competitor {bc} {fmt(bg, 2)}",
                        a["G"] >= 0.9)
                m = agg.get((d, wl, "mq-deadline"))
                tf, tm = total(a, wl), (total(m, wl) if m else None)
                if wl != "wd" and tf is not None and tm:
                    add(f"{W} total >= 95% of mq-deadline's ({d})", fq,
                        f"{fmt(tf, 2)} vs {fmt(tm, 2)} MiB/s, lower device "
                        f"({tf / tm * 100:.1f}%)", tf >= 0.95 * tm)
                if wl.startswith("wa"):
                    pf = (a["jobs"].get("commit") or {}).get("sync_p99_us")
                    for ref in ("mq-deadline", "bfq"):
                        r = agg.get((d, wl, ref))
                        pr = (r["jobs"].get("commit") or {}).get("sync_p99_us") if r else None
                        if pf is None or not pr:
                            continue
                        add(f"{W} commit fsync p99 <= 1/3 of {ref}'s ({d})", fq,
                            f"{fmt(pf / 1000, 1)} vs {fmt(pr / 1000, 1)} ms "
                            f"(ratio {pf / pr:.2f})", pf <= pr / 3)
                if wl == "wd":
                    dv = a.get("wd_dev")
                    if dv and all(v is not None for v in dv.values()):
                        add(f"WD shares within 10% of 1:4 ({d})", fq,
                            ", ".join(f"{n} {v * 100:+.0f}%" for n, v in dv.items())
                            + f" of its weight's share; G {fmt(a.get('G'), 2)}" + note,
                            max(abs(v) for v in dv.values()) <= 0.10)
            c = wcs.get((d, fq))
            if c:
                ws = {cf: x for (dd, cf), x in wcs.items() if dd == d and not is_fairq(cf)}
                if c.get("G") is not None:
                    bc = max((cf for cf in ws if ws[cf].get("G") is not None),
                             key=lambda cf: ws[cf]["G"], default=None)
                    add(f"WC G >= 0.9 ({d})", fq,
                        f"G {fmt(c['G'], 2)} (start-up s {fmt(c['s_startup'], 2)}: "
                        f"{fmt(c['loaded_ms'])} vs {fmt(c['alone_ms'])} ms; copy s "
                        f"{fmt(c['s_copy'], 2)}); best competitor {bc} "
                        f"{fmt(ws[bc]['G'] if bc else None, 2)}", c["G"] >= 0.9)
                m = ws.get("mq-deadline")
                if m and m.get("lower_mib_s") and c.get("lower_mib_s") is not None:
                    add(f"WC total >= 95% of mq-deadline's ({d})", fq,
                        f"{fmt(c['lower_mib_s'], 2)} vs {fmt(m['lower_mib_s'], 2)} MiB/s, "
                        f"lower device over the timed read "
                        f"({c['lower_mib_s'] / m['lower_mib_s'] * 100:.1f}%)",
                        c["lower_mib_s"] >= 0.95 * m["lower_mib_s"])
            for spec in sorted({k[2] for k in alone_lw if k[0] == d and is_copy(k[2])}):
                v = alone_lw.get((d, fq, spec))
                refs = [(c, alone_lw.get((d, c, spec))) for c in WF_RAW]
                refs = [(c, x) for c, x in refs if x]
                if v is None or not refs:
                    continue
                bc, bv = max(refs, key=lambda cv: cv[1])
                add(f"{spec} alone: writes >= 95% of the best raw scheduler's ({d})", fq,
                    f"{fmt(v, 2)} vs {bc} {fmt(bv, 2)} MiB/s, lower device "
                    f"({v / bv * 100:.1f}%)", v >= 0.95 * bv)
    return out


def job_unit(j):
    return "MiB/s" if is_copy(j.get("spec")) or (j.get("bs") or 0) >= MIB else "IOPS"


def job_val(j, v):
    """v (bytes/s) in the job's unit."""
    if v is None:
        return None
    return v / MIB if job_unit(j) == "MiB/s" else v / (j.get("bs") or 4096)


def ms_of(us):
    return us / 1000.0 if us is not None else None


def section_writes(agg, wcs, meas, runs, dev):
    """The write family on @dev: one table per workload, workload wc's,
    each spec alone, and what fairq's flows were over the window."""
    s = ""
    for wl in [w for w in WF_WLS if any(k[0] == dev and k[1] == w for k in agg)]:
        keys = sorted([k for k in agg if k[0] == dev and k[1] == wl],
                      key=lambda k: cfg_key(k[2]))
        names = []
        for k in keys:
            for n in agg[k]["jobs"]:
                if n not in names:
                    names.append(n)
        a0 = agg[keys[0]]
        j0 = {n: next(agg[k]["jobs"][n] for k in keys if n in agg[k]["jobs"])
              for n in names}
        head = ["config"]
        for n in names:
            u = "ops/s" if n == "commit" else job_unit(j0[n])
            head += [f"{n} {u} alone", f"{n} with (s)"]
        head += ["G", "total MiB/s (lower)", "lower write MiB/s",
                 "dirtied MiB/s (" + " / ".join(names) + ")",
                 "writeback ended MiB/s (" + " / ".join(names) + ")",
                 "submitted MiB/s, io.stat (" + " / ".join(names) + ")",
                 "dirty + writeback change MiB"]
        if wl.startswith("wa"):
            head += ["commit fsync p50 ms", "commit fsync p99 ms", "p99 alone ms"]
        if wl == "wb":
            head += ["reader p99 ms"]
        if wl == "wd":
            head += ["bulk1 share", "bulk4 share"]
        head += ["copy at disk after s", "teardown s", "n"]
        rows = []
        walone = alone_table(meas, "sync_p99_us")
        for k in keys:
            a = agg[k]
            r = [k[2]]
            for n in names:
                j = a["jobs"].get(n) or {}
                nd = 2 if job_unit(j0[n]) == "MiB/s" else 0
                r += [fmt(job_val(j0[n], j.get("alone")), nd),
                      fmt(job_val(j0[n], j.get("tput")), nd)
                      + (f" ({j['s']:.2f})" if j.get("s") is not None else "")]
            wf = a.get("wf") or {}
            cw, cs = wf.get("written_mib_s") or {}, wf.get("submitted_mib_s") or {}
            cd = wf.get("dirtied_mib_s") or {}
            r += [fmt(a.get("G"), 2), fmt(a.get("lower_mib_s"), 2),
                  fmt(a.get("lower_write_mib_s"), 2),
                  " / ".join(fmt(cd.get(n), 2) for n in names),
                  " / ".join(fmt(cw.get(n), 2) for n in names),
                  " / ".join(fmt(cs.get(n), 2) for n in names),
                  fmt(wf.get("pool_delta_mib"), 1)]
            if wl.startswith("wa"):
                c = a["jobs"].get("commit") or {}
                spec = c.get("spec") or "wsync4k"
                ge = ">= " if c.get("sync_censored") else ""
                r += [ge + fmt(ms_of(c.get("sync_p50_us")), 1),
                      ge + fmt(ms_of(c.get("sync_p99_us")), 1),
                      fmt(ms_of(walone.get((dev, k[2], spec))), 1)]
            if wl == "wb":
                r += [fmt(ms_of((a["jobs"].get("reader") or {}).get("p99_us")), 1)]
            if wl == "wd":
                ws = a.get("win_share") or {}
                r += [fmt(ws.get("bulk1"), 3), fmt(ws.get("bulk4"), 3)]
            r += [fmt(ms_of(wf.get("start_ms")), 1), fmt(ms_of(wf.get("drain_ms")), 1),
                  a["n"]]
            rows.append(r)
        s += f"#### {dev}, workload {WF_TITLE.get(wl, wl)}\n\n"
        if len(runs) > 1:
            s += f"(from run {run_note(runs, a0)})\n\n"
        wf = a0.get("wf") or {}
        s += (f"File system {wf.get('fs', '?')}; `{wf.get('sysctl', '')}`; lower "
              f"queue `{wf.get('queue', '')}` (under {keys[0][2]}). A copy's MiB/s: "
              "the lower device's writes that are no other job's data (wd: split by "
              "the page writeback each copy's cgroup completed); dirtied, writeback "
              "ended (its memcg: dirtied less its dirty + writeback growth) and "
              "submitted (io.stat) per cgroup are diagnostics, none a rate by "
              "itself (bench/README.md).\n\n")
        s += md_table(head, rows) + "\n"
        if any((agg[k]["jobs"].get("commit") or {}).get("sync_censored") for k in keys):
            s += ("`>=`: no fdatasync completed in some repetition's window: its "
                  "figure there is the window's length, a lower bound.\n\n")
    rows = []
    for (d, cfg), c in sorted(wcs.items(), key=lambda kv: cfg_key(kv[0][1])):
        if d != dev:
            continue
        ge = ">= " if c.get("cut") else ""
        rows.append([cfg, fmt(c["alone_ms"]), ge + fmt(c["loaded_ms"]), ge + fmt(c["ratio"], 2),
                     fmt(c["s_startup"], 2),
                     fmt(c["copy_mib_s"], 2) + (f" ({c['s_copy']:.2f})"
                                                if c.get("s_copy") is not None else ""),
                     fmt(c.get("copy_alone_mib_s"), 2), fmt(c["G"], 2),
                     fmt(c["lower_mib_s"], 2), fmt(c["lower_write_mib_s"], 2),
                     fmt(ms_of(c.get("start_ms")), 1), c["n"]])
    if rows:
        s += (f"#### {dev}, workload {WF_TITLE['wc']}\n\nThe start-up's s = alone ms / "
              "loaded ms; the copy's MiB/s: what of its data reached the disk over the "
              "timed read, its s against its alone run; G = min s / (1/2).\n\n")
        s += md_table(["config", "alone ms", "loaded ms", "loaded / alone", "start-up s",
                       "copy MiB/s (s)", "copy alone MiB/s", "G", "total MiB/s (lower)",
                       "lower write MiB/s", "copy at disk after s", "n"], rows) + "\n"
        if any(c.get("cut") for (d, _), c in wcs.items() if d == dev):
            s += ("`>=`: the timed read was stopped after `WC_MAX_S` (300 s) in "
                  "some repetition: a lower bound.\n\n")
    al = [m for m in meas if m["dev"] == dev and m["wl"].startswith("alone-")]
    if al:
        specs, tab = [], {}
        for m in al:
            for j in m["jobs"]:
                sp = j.get("spec") or j["name"]
                if sp not in specs:
                    specs.append(sp)
                if is_copy(sp):
                    v = (f"{fmt(j['tput'] / MIB, 2)} ({fmt(m.get('lower_write_mib_s'), 2)})")
                elif j.get("sync_p99_us") is not None:
                    v = (f"{fmt(j['tput'] / (j['bs'] or 4096))} "
                         f"(p99 {fmt(ms_of(j['sync_p99_us']), 1)} ms)")
                else:
                    v = (f"{fmt(j['tput'] / (j['bs'] or 4096))} "
                         f"(p99 {fmt(ms_of(j.get('p99_us')), 1)} ms)")
                tab.setdefault(m["cfg"], {})[sp] = v
        s += (f"#### {dev}: the write family's specs alone (the slowdowns' reference; "
              "a window as long as the workloads')\n\nwcopy: MiB/s of its data that "
              "reached the disk (the lower device's write MiB/s); wsync4k: fdatasync'd "
              "appends per second (fsync p99); r4k-file: IOPS (p99).\n\n")
        s += md_table(["config"] + specs,
                      [[c] + [tab[c].get(sp, "-") for sp in specs]
                       for c in sorted(tab, key=cfg_key)]) + "\n"
    lines = []
    for k in sorted([k for k in agg if k[0] == dev and is_wf(k[1]) and is_fairq(k[2])],
                    key=lambda k: (wl_key(k[1]), cfg_key(k[2]))):
        fl = ((agg[k].get("wf") or {}).get("flows") or [])[:6]
        if not fl:
            continue
        lines.append(f"- {k[1]} {k[2]}: " + "; ".join(
            f"{f['who'] or '?'} (key {f['key']}): {f['bytes'] / MIB:.1f} MiB "
            f"in {f['reqs']} requests{'' if f['since_window'] else ' (flow new in the window)'}"
            f", wait mean {fmt(f['wait_ms_mean'], 1)} ms, max {fmt(f['wait_ms_max'], 0)} ms"
            for f in fl))
    if lines:
        s += (f"#### {dev}: fairq's flows over the window (the last repetition; the "
              "busiest six by bytes; with classify=tgid a flow is a process, named "
              "by its comm at the window's end (a kworker's says what it ran then: "
              "flush-MAJ:MIN the flusher, ext4-rsv-conversion ext4's end of "
              "writeback), the journal jbd2/DEV; with classify=cgroup a cgroup; "
              "the wait is a request's time queued in fairq)\n\n"
              + "\n".join(lines) + "\n\n")
    return s


# ------------------------------------------------------------ start-up

STARTUP_TARGET = 1.5    # loaded / alone, fairq at its defaults
# The control of the start-up figure (guest.sh): the readers on a twin
# disk, so that loaded / alone is what they cost the guest's CPUs.
STARTUP_CONTROL = "readers-elsewhere"


def startup_agg(runs):
    """{(dev, cfg): {alone_ms, loaded_ms, ratio, n, run}}: medians of the
    BENCH_STARTUP lines that read cleanly (rc 0), each disk's from the last
    run that measured start-up on it."""
    last = {}
    for r in runs:
        for o in r["startup"]:
            if o.get("wl", "startup") == "startup":
                last[o["dev"]] = r["index"]
    out = {}
    for r in runs:
        by = {}
        for o in r["startup"]:
            if o.get("wl", "startup") != "startup":
                continue
            if last[o["dev"]] != r["index"] or o.get("rc") or not o.get("alone_ms"):
                continue
            by.setdefault((o["dev"], o["cfg"]), []).append(o)
        for k, os_ in by.items():
            a = median([o["alone_ms"] for o in os_])
            lo = median([o["loaded_ms"] for o in os_])
            out[k] = {"alone_ms": a, "loaded_ms": lo,
                      "ratio": median([o["loaded_ms"] / o["alone_ms"] for o in os_]),
                      "n": len(os_), "run": r["index"],
                      "readers": os_[0].get("readers"), "files": os_[0].get("files")}
    return out


def wc_agg(runs, alone):
    """{(dev, cfg): figures} of workload wc (BENCH_STARTUP lines with
    "wl":"wc": the start-up's files read cold alone, then beside a bulk
    copy), each disk's from the last run that measured wc on it; lines
    whose read failed (rc) left out. Per line: the start-up's s = alone
    ms / loaded ms (its rate is 1 / its time), the copy's rate = its
    cgroup's writes on the lower device (io.stat) over the timed read,
    its s against its alone-wcopy run on the same disk and configuration,
    G = min s / (1/2); the lower device's MiB/s over the timed read.
    (The copy's rate: the lower device's writes, as in wf_window(); none
    if its processes had exited.)
    Medians over the repetitions."""
    last = {}
    for r in runs:
        for o in r["startup"]:
            if o.get("wl") == "wc":
                last[o["dev"]] = r["index"]
    by = {}
    for r in runs:
        for o in r["startup"]:
            if (o.get("wl") != "wc" or last[o["dev"]] != r["index"] or o.get("rc")
                    or not o.get("alone_ms") or not o.get("loaded_ms")):
                continue
            by.setdefault((o["dev"], o["cfg"]), []).append((r["index"], o))
    out = {}
    for (dev, cfg), os_ in by.items():
        rows = []
        for _, o in os_:
            win = o.get("win") or {}
            sec = (win.get("ms") or 0) / 1000.0
            wf = o.get("wf") or {}
            cg = cg_delta(wf)
            # the copy's data: the lower device's writes (the start-up
            # only reads), as in wf_window()
            copy_b = ((win.get("wsect") or 0) * 512
                      if "copy" in cg and not cg["copy"]["gone"] else None)
            rate = copy_b / sec if copy_b is not None and sec else None
            ref = alone.get((dev, cfg, "wcopy"))
            s_st = o["alone_ms"] / o["loaded_ms"]
            s_cp = rate / ref if rate is not None and ref else None
            rows.append({
                "alone_ms": o["alone_ms"], "loaded_ms": o["loaded_ms"],
                "ratio": o["loaded_ms"] / o["alone_ms"], "s_startup": s_st,
                "copy_mib_s": rate / MIB if rate is not None else None,
                "s_copy": s_cp,
                "G": min(s_st, s_cp) / 0.5 if s_cp is not None else None,
                "lower_mib_s": (((win.get("rsect") or 0) + (win.get("wsect") or 0))
                                * 512 / MIB / sec) if sec else None,
                "lower_write_mib_s": ((win.get("wsect") or 0) * 512 / MIB / sec
                                      if sec else None),
                "start_ms": wf.get("start_ms"), "drain_ms": wf.get("drain_ms"),
                "cut": 1 if o.get("cut") else 0})
        agg = {k: median([x[k] for x in rows]) for k in rows[0]}
        agg["cut"] = any(x["cut"] for x in rows)
        agg.update({"n": len(rows), "run": os_[0][0], "files": os_[0][1].get("files"),
                    "copy_alone_mib_s": (alone.get((dev, cfg, "wcopy")) or 0) / MIB
                    or None})
        out[(dev, cfg)] = agg
    return out


def startup_targets(st):
    out = []
    for (dev, cfg), a in sorted(st.items()):
        if cfg != HEADLINE_FQ:
            continue
        comp = [(c, b["ratio"]) for (d, c), b in st.items()
                if d == dev and not is_fairq(c) and c != STARTUP_CONTROL]
        bc = min(comp, key=lambda cv: cv[1]) if comp else (None, None)
        ctl = st.get((dev, STARTUP_CONTROL))
        out.append((f"start-up under {a['readers']} readers <= "
                    f"{STARTUP_TARGET:g}x alone ({dev})", cfg,
                    f"{a['loaded_ms']:.0f} vs {a['alone_ms']:.0f} ms "
                    f"({a['ratio']:.2f}x); best competitor {bc[0]} "
                    f"{fmt(bc[1], 2)}x"
                    + (f"; the readers on another disk (their CPU cost "
                       f"alone): {ctl['ratio']:.2f}x" if ctl else ""),
                    "PASS" if a["ratio"] <= STARTUP_TARGET else "MISS"))
    return out


def section_startup(st, runs):
    if not st:
        return ""
    order = sorted(st, key=lambda k: (k[0], cfg_key(k[1])))
    rows = [[dev, cfg, fmt(st[(dev, cfg)]["alone_ms"]), fmt(st[(dev, cfg)]["loaded_ms"]),
             f"{st[(dev, cfg)]['ratio']:.2f}", str(st[(dev, cfg)]["n"])]
            for dev, cfg in order]
    a0 = next(iter(st.values()))
    return ("## Interactive start-up\n\nReading " + str(a0["files"]) +
            " small files (4-16 KiB, 10 directories) cold from ext4 with cat, "
            "alone and while " + str(a0["readers"]) + " direct sequential "
            "readers (1 MiB, psync) stream from the same disk (the timed "
            "read begins once every reader has read); medians.\n\n"
            + md_table(["disk", "config", "alone ms", "loaded ms", "loaded / alone", "reps"],
                       rows) + "\n"
            + (f"\n`{STARTUP_CONTROL}` is a control, not a scheduler: the "
               "files on the raw disk, the readers on a twin disk with the "
               "same settings; its ratio is what the readers cost the guest's "
               "CPUs, which no scheduler of the files' disk can remove.\n"
               if any(k[1] == STARTUP_CONTROL for k in st) else ""))


# --------------------------------------------------------------- markdown

def _numeric(c):
    c = str(c).replace(",", "").replace("%", "").replace("+", "").strip()
    if c in ("-", "inf", ""):
        return True
    try:
        float(c)
        return True
    except ValueError:
        return False


def md_table(head, rows):
    """A markdown table; columns of numbers right-aligned."""
    s = "| " + " | ".join(head) + " |\n"
    align = []
    for i in range(len(head)):
        num = i > 0 and all(_numeric(r[i]) for r in rows if i < len(r))
        align.append("---:" if num else "---")
    s += "|" + "|".join(align) + "|\n"
    for r in rows:
        s += "| " + " | ".join(str(c) for c in r) + " |\n"
    return s


def job_cell(j, wl):
    """A job's throughput in the window (IOPS at its block size, or MiB/s)
    and its slowdown."""
    if j["tput"] is None:
        return "-"
    v = fmt(j["tput"] / MIB, 2) if tput_unit(wl) == "MiB/s" \
        else fmt(j["tput"] / (j["bs"] or 4096))
    return v + (f" ({j['s']:.2f})" if j.get("s") is not None else "")


def run_note(runs, a):
    return runs[a["run"]]["label"] if len(runs) > 1 else None


def section_workload(agg, runs, dev, wl):
    keys = sorted([k for k in agg if k[0] == dev and k[1] == wl and not is_sweep(k[2])],
                  key=lambda k: cfg_key(k[2]))
    if not keys:
        return ""
    names = []
    for k in keys:
        for n in agg[k]["jobs"]:
            if n not in names:
                names.append(n)
    unit = tput_unit(wl)
    nd = 2 if unit == "MiB/s" else 0
    many = len(names) > 8
    multi = len(names) > 1
    show_fio = any(disagrees(agg[k], wl) for k in keys)
    show_fq = any(agg[k]["fq_iops"] is not None for k in keys)
    head = ["config"]
    if not many:
        head += [f"{n} {unit} (s)" if multi else f"{n} {unit}" for n in names]
    head += [f"total {unit} (lower)"]
    if show_fio:
        head += [f"fio sum {unit}"]
    if show_fq:
        head += [f"fairq done {unit}"]
    if multi and not many:
        head += ["G", "Jain (s)"]
    if multi:
        head += ["Jain (bytes)", "max/min"]
    has_lat = wl in ("w2", "w5")
    if has_lat:
        who = "reader" if wl == "w5" else "light"
        head += [f"{who} share", f"{who} p50 us", f"{who} p99 us"]
    if wl in ("w4", "w4cg"):
        head += ["idle share"]
    if wl == "w5":
        head += ["lower write MiB/s"]
    if many:
        head += ["I/Os per flow", "Jain from noise alone"]
    head += ["CPU us/IO", "n"]
    rows = []
    for k in keys:
        a = agg[k]
        cfg = k[2] + (" (tuning set)" if tuning(dev, wl, k[2]) else "")
        r = [cfg]
        if not many:
            r += [job_cell(a["jobs"][n], wl) if n in a["jobs"] else "-" for n in names]
        r += [fmt(total(a, wl), nd)]
        if show_fio:
            r += [fmt(fio_sum(a, wl), nd) + (" !" if disagrees(a, wl) else "")]
        if show_fq:
            fq = a["fq_mib_s"] if unit == "MiB/s" else a["fq_iops"]
            r += [fmt(fq, nd)]
        if multi and not many:
            r += [fmt(a["G"], 2), fmt(a["jain_s"], 3)]
        if multi:
            r += [fmt(a["jain"], 3), fmt(a["maxmin"], 2)]
        if has_lat:
            r += [fmt(a["light_share"], 3), fmt(a["light_p50_us"]),
                  fmt(a["light_p99_us"])]
        if wl in ("w4", "w4cg"):
            r += [fmt((a.get("win_share") or {}).get("idle"), 3)]
        if wl == "w5":
            r += [fmt(a.get("lower_write_mib_s"), 2)]
        if many:
            r += [fmt(a["ios_per_job"], 1), fmt(a["jain_noise"], 3)]
        r += [fmt(a["cpu_us_per_io"]), a["n"]]
        rows.append(r)
    src = run_note(runs, agg[keys[0]])
    s = f"#### {dev}, workload {WL_TITLE.get(wl, wl)}\n\n"
    if src:
        s += f"(from run {src})\n\n"
    s += md_table(head, rows)
    if show_fio:
        s += ("\n- `!`: fio's sum of its per-job rates is more than 5% off "
              "the lower device's count over the window (fio measures each "
              "job over its own runtime); the total is the device's.\n")
    if wl.startswith("w7-"):
        s += "\n" + scale_extra(agg, keys)
    if wl == "w5":
        s += "\n" + w5_extra(agg, keys)
    return s + "\n"


def section_alone(meas, runs, dev):
    rows, specs = {}, []
    src = None
    for m in meas:
        if m["dev"] != dev or m["wl"] != "alone":
            continue
        src = m["run"]
        for j in m["jobs"]:
            if j["name"] not in specs:
                specs.append(j["name"])
            unit_mib = j["bs"] >= MIB or j["name"].startswith("w")
            rows.setdefault(m["cfg"], {})[j["name"]] = (
                fmt(j["tput"] / MIB, 2) + " MiB/s" if unit_mib
                else fmt(j["tput"] / (j["bs"] or 4096)))
    if not rows:
        return ""
    s = (f"#### {dev}: each job spec alone (the slowdowns' reference; "
         f"IOPS unless marked)\n\n")
    if len(runs) > 1 and src is not None:
        s += f"(from run {runs[src]['label']})\n\n"
    s += md_table(["config"] + specs,
                  [[c] + [rows[c].get(sp, "-") for sp in specs]
                   for c in sorted(rows, key=cfg_key)])
    return s + "\n"


def section_sweep(agg, runs, dev):
    """One table per workload swept on @dev (fairq-cfq at two or more
    fixed depths; a single fixed depth, as W6's comparison with depth=32,
    is no sweep)."""
    by_wl = {}
    for k in agg:
        if k[0] == dev and is_sweep(k[2]):
            by_wl.setdefault(k[1], []).append(k)
    return "".join(sweep_table(agg, runs, dev, wl,
                               sorted(keys, key=lambda k: cfg_key(k[2])))
                   for wl, keys in sorted(by_wl.items(), key=lambda i: wl_key(i[0]))
                   if len(keys) > 1)


def sweep_table(agg, runs, dev, wl, keys):
    _, bar = best(agg, dev, wl, floor_cfgs(agg, dev, wl), lambda a: total(a, wl))
    light = wl == "w2"

    def light_s(a):
        j = (a.get("jobs") or {}).get("light") or {}
        return (f"{fmt(j['iops'])} ({fmt(j['s'], 2)})"
                if j.get("s") is not None else "-")

    rows = []
    for k in keys:
        a = agg[k]
        row = [sweep_depth(k[2]), fmt(total(a, wl)), fmt(ratio(total(a, wl), bar), 2),
               fmt(a["G"], 2)]
        if light:
            row += [light_s(a), fmt(a["light_p99_us"]), fmt(a["light_p50_us"])]
        rows.append(row + [a["n"]])
    s = (f"#### {dev}: depth sweep, fairq-cfq at a fixed depth, workload {wl[1:]}\n\n"
         "Where the throughput target (total >= 0.95 of the best of none and "
         "mq-deadline) and the guarantee (G >= 0.9) meet, if anywhere: "
         "s and G against fairq-cfq's alone runs (their jobs at "
         "depth=auto).\n\n")
    if len(runs) > 1:
        s += f"(from run {run_note(runs, agg[keys[0]])})\n\n"
    head = ["depth", f"total {tput_unit(wl)} (lower)", "total / best", "G"]
    if light:
        head += ["light IOPS (s)", "light p99 us", "light p50 us"]
    return s + md_table(head + ["n"], rows) + "\n"


def w5_extra(agg, keys):
    """Workload 5's attribution evidence: the two cgroups' ids and what
    fairq's flows were at each window's end (keys are cgroup ids with
    classify=cgroup, tgids otherwise; bytes since the device was made)."""
    cg = next((agg[k].get("w5_cgroups") for k in keys
               if agg[k].get("w5_cgroups")), "")
    lines = []
    if cg:
        lines.append(f"- cgroups: `{cg}`")
    for k in keys:
        fl = agg[k].get("w5_flows")
        if fl:
            reps = "; ".join(", ".join(f) or "none" for f in fl)
            lines.append(f"- {k[2]}: fairq flows at window end, per repetition: {reps}")
    return "\n".join(lines) + "\n" if lines else ""


def scale_extra(agg, keys):
    rows = []
    for k in keys:
        a = agg[k]
        if a.get("fairq_mem_bytes") is None:
            continue
        rows.append([k[2], fmt(a["fairq_mem_bytes"]), fmt(a.get("fairq_flows_max")),
                     fmt(a.get("fairq_per_flow"))])
    if not rows:
        return ""
    return ("fairq's memory at the window's end (stats `mem_bytes`: the scheduler "
            "instance, the flows that exist then and their table; flows are "
            "allocated as keys appear and freed when drained):\n\n"
            + md_table(["config", "mem_bytes", "flows at window end",
                        "mem_bytes per flow (instance included)"], rows))


def comparison(agg):
    """Each fairq configuration, as itself, against the competitor
    configuration that did best on the same disk and workload: by G (the
    guarantee), by total throughput (lower device) and, for workload 2, by
    the light reader's p99. The defaults (fairq-cfq) come first."""
    rows = []
    keys = sorted([k for k in agg if is_fairq(k[2]) and not is_sweep(k[2])
                   and not k[1].startswith("w6")],
                  key=lambda k: (k[0], wl_key(k[1]), k[2] != HEADLINE_FQ, cfg_key(k[2])))
    for dev, wl, cfg in keys:
        a = agg[(dev, wl, cfg)]
        comp = competitors(agg, dev, wl)
        if not comp:
            continue
        unit = tput_unit(wl)
        nd = 2 if unit == "MiB/s" else 0
        bg, vg = best(agg, dev, wl, comp, lambda b: b["G"])
        bt, vt = best(agg, dev, wl, comp, lambda b: total(b, wl))
        r = [dev, wl, cfg + (" (tuning set)" if tuning(dev, wl, cfg) else "")]
        r += [fmt(a["G"], 2), f"{fmt(vg, 2)} {bg}" if bg else "-"]
        r += [fmt(total(a, wl), nd), f"{fmt(vt, nd)} {bt}" if bt else "-",
              fmt(ratio(total(a, wl), vt), 2)]
        if wl == "w2":
            bp, vp = best(agg, dev, wl, comp, lambda b: b["light_p99_us"], low=True)
            r += [fmt(a["light_p99_us"]), f"{fmt(vp)} {bp}" if bp else "-"]
        else:
            r += ["", ""]
        rows.append(r)
    if not rows:
        return ""
    return md_table(["disk", "wl", "fairq config", "G", "best competitor G",
                     "total", "best competitor total", "total / best",
                     "light p99 us", "best competitor p99 us"], rows)


def calibration(meas, info):
    rows = []
    nsec = int(info.get("nb_nsec") or 0)
    for m in meas:
        if not m["dev"].startswith("calib"):
            continue
        d = m["dev"]
        if d.startswith("calib-nullb-qd") and nsec:
            qd = int(d[len("calib-nullb-qd"):])
            nominal, what = qd * 1e9 / nsec, f"hw_queue_depth={qd}, {nsec / 1e6:g} ms"
        elif d == "calib-virtio":
            nominal = float(info.get("throttle_iops") or 0) or None
            what = f"iops-total={info.get('throttle_iops')}"
        else:
            nominal, what = None, "unthrottled (CPU-bound)"
        busy = (m["cpu_ms"] / m["win"]["ms"] * 100 / max(info.get("cpus", 1), 1)
                if m["cpu_ms"] is not None and m["win"].get("ms") else None)
        rows.append([d, what, fmt(nominal), fmt(m["lower_iops"]),
                     fmt(ratio(m["lower_iops"], nominal), 2), fmt(busy, 0, "%")])
    if not rows:
        return ""
    return md_table(["device", "setting", "nominal IOPS",
                     "lower IOPS (w1, raw none)", "measured / nominal",
                     "guest CPU busy"], rows)


def run_lines(runs):
    s = ""
    for r in runs:
        h, info = r["host"], r["info"]
        load = h.get("loadavg") or []
        s += (f"- run **{r['label']}**: {h.get('date', '?')}; host {h.get('host', '?')}; "
              f"{h.get('qemu', '?')}, TCG; guest kernel {info.get('kernel', '?')}, "
              f"{info.get('fio', '?')}, fairq.ko "
              f"{'loaded' if info.get('fairq') else 'NOT available'}; mode "
              f"{info.get('mode')}, {info.get('reps')} repetitions (interleaved), "
              f"{info.get('runtime')} s measured after {info.get('ramp')} s ramp, "
              f"alone runs {info.get('alone_runtime')} s"
              + (f"; the write family {info.get('wf_runtime')} s after "
                 f"{info.get('wf_ramp')} s ramp, its alone runs alike"
                 if info.get("wf_runtime") else "")
              + "; VM exit status "
              f"{h.get('vm_rc', '?')}"
              + ("" if r["done"] else "; the guest did not finish (partial run)"))
        if load:
            s += (f"; host load average min {min(load):.1f}, median "
                  f"{statistics.median(load):.1f}, max {max(load):.1f}")
        s += "\n"
    return s


def write_md(path, runs, meas, agg, tg, errs):
    info = runs[-1]["info"]
    s = "# fairq benchmark results\n\n"
    s += run_lines(runs)
    if len(runs) > 1:
        s += ("- merged (`bench/run --merge`): each table comes whole from the "
              "last run that measured it, named under its title\n")
    s += (f"- figures are medians of the repetitions; the fairq `-rec` "
          f"configurations use `{info.get('fairq_rec')}`, chosen on the tuning "
          f"set (workloads 1 and 2 on nullb-lat: rows marked \"tuning set\", "
          f"not scored) and scored on everything else\n")
    s += (f"- `-nr`: nr_requests={info.get('nr_requests')} (the kernel's "
          f"default is 2 x the hardware queue depth: 4 on nullb-lat); "
          f"`bfq-nr-thru`: also low_latency=0 slice_idle=0; `iocost`: "
          f"{info.get('iocost_default')}, cgroup weights "
          f"`{(info.get('cg_weights') or '').strip()}`\n")
    s += f"- {len(meas)} measurements" + (f", {len(errs)} set-ups failed or left out" if errs else "") + "\n\n"
    s += "## Devices\n\n"
    s += (f"- **nullb-lat**: null_blk, irqmode=2 (timer completion), "
          f"completion_nsec={info.get('nb_nsec')}, hw_queue_depth="
          f"{info.get('nb_qd')}, submit_queues=1: at most "
          f"{info.get('nb_qd')} I/Os in service, each "
          f"{int(info.get('nb_nsec', 0)) / 1e6:g} ms: nominal "
          f"{int(info.get('nb_qd', 0)) * 1e9 / max(int(info.get('nb_nsec', 1)), 1):,.0f} IOPS\n")
    s += (f"- **virtio**: virtio-blk /dev/vdc with QEMU "
          f"throttling.iops-total={info.get('throttle_iops')}, "
          f"throttling.bps-total={info.get('throttle_bps')}\n")
    s += (f"- **nbd**: /dev/nbd0 over fairq-nbd (unix socket, in the guest) "
          f"backed by /dev/vdb, device model --bw {info.get('nbd_bw')} MiB/s "
          f"--depth {info.get('nbd_depth')} "
          f"--latency-us {info.get('nbd_lat_us')}\n")
    s += ("- **nullb-fast**: null_blk irqmode=0, hw_queue_depth=64: "
          "CPU-bound on purpose (overhead)\n")
    s += ("- **nullb-lat-mem**: nullb-lat's settings, memory_backed=1, "
          "512 MiB, ext4 (workload 5)\n\n")
    cal = calibration(meas, info)
    if cal:
        s += ("### Device-bound check\n\nThe same workload 1 on raw `none`, "
              "the setting varied: a device-bound disk's throughput follows "
              "its setting; the unthrottled null_blk shows what the guest's "
              "CPU can drive.\n\n" + cal + "\n")
    s += "## Targets\n\n"
    s += md_table(["target", "config", "figures", "result"],
                  [list(t) for t in tg]) + "\n"
    s += section_startup(startup_agg(runs), runs)
    cmp_ = comparison(agg)
    if cmp_:
        s += ("## fairq against the best competitor\n\nEach fairq configuration "
              "as itself (no best-of); each figure beside the competitor "
              "configuration (kernel scheduler at defaults or at its best "
              "settings, io.cost, dm-linear, none) that did best on that disk "
              "and workload, named.\n\n" + cmp_ + "\n")
    s += "## Tables\n\n"
    s += ("Per job: its throughput in the measured window (its bytes from "
          "/proc/TID/io) and, in brackets, its slowdown s = that / its "
          "throughput alone (the alone table, same disk and configuration). "
          "**G** = min over the jobs of s_i / (w_i / sum w): 1 = every job "
          "got at least its weighted share of what it does alone. **Jain "
          "(s)** over s_i / (w_i / sum w), **Jain (bytes)** over the window "
          "bytes / w_i (workload 4: weights 200:100:25, the idle-class "
          "reader has no weight and is left out of G and both Jain; "
          "workload 4 as cgroups: weights 200:100:25:1). **total** from the "
          "lower device's counters over the window; **fairq done** from "
          "fairq's stats over the same window; latencies are fio's "
          "completion latency percentiles; n = repetitions.\n\n")
    alone = alone_table(meas)
    wcs = wc_agg(runs, alone)
    devs = sorted({k[0] for k in agg} | {m["dev"] for m in meas if is_alone(m["wl"])}
                  | {k[0] for k in wcs},
                  key=lambda d: (d.startswith("calib"), d))
    for dev in devs:
        if dev.startswith("calib"):
            continue
        s += f"### {dev}\n\n"
        for wl in sorted({k[1] for k in agg if k[0] == dev and not is_wf(k[1])},
                         key=wl_key):
            s += section_workload(agg, runs, dev, wl)
        s += section_alone(meas, runs, dev)
        s += section_sweep(agg, runs, dev)
        s += section_writes(agg, wcs, meas, runs, dev)
    if errs:
        s += "## Failed set-ups and measurements left out\n\n" + "".join(
            f"- {e.get('dev')} {e.get('wl')} {e.get('cfg')} rep "
            f"{e.get('rep')}: {e.get('why')}\n" for e in errs) + "\n"
    with open(path, "w") as f:
        f.write(s)


# ------------------------------------------------------------------ plots

def gnuplot(script, out_dir):
    if not shutil.which("gnuplot"):
        print("analyze: gnuplot not installed, no plots", file=sys.stderr)
        return
    r = subprocess.run(["gnuplot"], input=script, text=True, cwd=out_dir,
                       capture_output=True)
    if r.returncode:
        print("analyze: gnuplot: " + r.stderr.strip()[:500], file=sys.stderr)


def plot_shares(agg, dev, wl, out_dir):
    keys = sorted([k for k in agg if k[0] == dev and k[1] == wl
                   and not is_sweep(k[2])], key=lambda k: cfg_key(k[2]))
    if not keys:
        return None
    names = []
    for k in keys:
        for n in agg[k]["jobs"]:
            if n not in names:
                names.append(n)
    dat = f"share_{dev}_{wl}.dat"
    with open(os.path.join(out_dir, dat), "w") as f:
        f.write("config " + " ".join(names) + "\n")
        for k in keys:
            ws = agg[k].get("win_share") or {}
            tot = sum(v or 0 for v in ws.values()) or 1
            vals = [(ws.get(n) or 0) / tot for n in names]
            f.write(k[2] + " " + " ".join(f"{v:.4f}" for v in vals) + "\n")
    png = f"share_{dev}_{wl}.png"
    cols = " ".join(str(i) for i in range(2, len(names) + 2))
    # Dashed lines where the shares would end if the scheduler were fair:
    # equal shares, or for workload 4 the weights 8:4:1 (idle: 0).
    if wl in ("w4", "w4cg"):
        wt = W4_WEIGHTS if wl == "w4" else W4CG_WEIGHTS
        wsum = sum(wt.values())
        cuts, acc = [], 0
        for n in names[:-1]:
            acc += wt.get(n, 0)
            cuts.append(acc / wsum)
    else:
        cuts = [k / len(names) for k in range(1, len(names))]
    arrows = "\n".join(f"set arrow from graph 0, first {c:.4f} to graph 1, "
                       f"first {c:.4f} nohead dt 2 lw 1.5 lc rgb 'black' front"
                       for c in cuts)
    fair = {"w4": "weights 8:4:1:0", "w4cg": "weights 200:100:25:1"}.get(wl, "equal shares")
    script = f"""
set terminal pngcairo size 900,420 font ",10"
set output '{png}'
set title "{dev}, workload {wl}: each process's share of the bytes (common window); dashed: {fair}"
{arrows}
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.7
set yrange [0:1]
set ylabel "share"
set key outside right top
set xtics rotate by -30
plot for [i in "{cols}"] '{dat}' using (column(int(i))):xtic(1) title columnhead(int(i))
"""
    gnuplot(script, out_dir)
    return png


def plot_cdf(meas, dev, wl, out_dir):
    """CDF of the light process's completion latency per configuration,
    from fio's json+ histogram bins, all repetitions pooled; and the same
    job spec alone under mq-deadline."""
    per_cfg = {}
    for m in meas:
        if m["dev"] != dev or is_sweep(m["cfg"]):
            continue
        if m["wl"] == "alone" and m["cfg"] != "mq-deadline":
            continue
        if m["wl"] not in (wl, "alone"):
            continue
        for j in m["jobs"]:
            if j["name"] in ("light", "r4k-psync") and j.get("_bins"):
                cfg = m["cfg"] if m["wl"] == wl else m["cfg"] + " (alone)"
                d = per_cfg.setdefault(cfg, {})
                for k, v in j["_bins"].items():
                    d[int(k)] = d.get(int(k), 0) + v
    if not per_cfg:
        return None
    files = []
    for cfg in sorted(per_cfg, key=cfg_key):
        bins = per_cfg[cfg]
        total = sum(bins.values())
        fn = f"cdf_{dev}_{wl}_{cfg.replace(' ', '').replace('(', '_').replace(')', '')}.dat"
        acc = 0
        with open(os.path.join(out_dir, fn), "w") as f:
            for ns in sorted(bins):
                acc += bins[ns]
                f.write(f"{ns / 1000.0:.3f} {acc / total:.5f}\n")
        files.append((cfg, fn))
    png = f"cdf_{dev}_{wl}.png"
    plots = ", ".join(f"'{fn}' using 1:2 with steps lw 2 title '{cfg}'"
                      for cfg, fn in files)
    script = f"""
set terminal pngcairo size 900,480 font ",10"
set output '{png}'
set title "{dev}, workload 2: latency CDF of the synchronous reader"
set logscale x
set xlabel "completion latency [us]"
set ylabel "fraction of I/Os"
set yrange [0:1.01]
set grid
set key bottom right
plot {plots}
"""
    gnuplot(script, out_dir)
    return png


def plot_scale(agg, out_dir):
    rows = {}
    for (dev, wl, cfg), a in agg.items():
        if wl.startswith("w7-"):
            rows.setdefault(cfg, []).append((int(wl[3:]), a["jain"],
                                             a["lower_iops"]))
    if not rows:
        return None
    plots = []
    for cfg in sorted(rows, key=cfg_key):
        fn = f"scale_{cfg}.dat"
        with open(os.path.join(out_dir, fn), "w") as f:
            for n, j, t in sorted(rows[cfg]):
                f.write(f"{n} {j if j is not None else 0} {t}\n")
        plots.append(f"'{fn}' using 1:2 with linespoints lw 2 title '{cfg}'")
    png = "scale_w7.png"
    script = f"""
set terminal pngcairo size 800,420 font ",10"
set output '{png}'
set title "workload 7: Jain's index against the number of processes"
set logscale x 2
set xlabel "processes"
set ylabel "Jain's index"
set yrange [0:1.02]
set grid
set key bottom left
plot {", ".join(plots)}
"""
    gnuplot(script, out_dir)
    return png




def plot_sweep(agg, dev, out_dir):
    keys = sorted([k for k in agg if k[0] == dev and k[1] == "w2" and is_sweep(k[2])],
                  key=lambda k: cfg_key(k[2]))
    if not keys:
        return None
    dat = f"sweep_{dev}.dat"
    with open(os.path.join(out_dir, dat), "w") as f:
        for k in keys:
            a = agg[k]
            f.write(f"{sweep_depth(k[2])} {a['lower_iops'] or 0:.1f} "
                    f"{(a['light_p99_us'] or 0) / 1000.0:.2f}\n")
    png = f"sweep_{dev}.png"
    script = f"""
set terminal pngcairo size 800,420 font ",10"
set output '{png}'
set title "{dev}, workload 2: fairq-cfq at a fixed depth"
set logscale x 2
set xlabel "fairq depth (requests in flight below)"
set ylabel "total IOPS (lower device)"
set y2label "light reader p99 [ms]"
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
set grid
set key top left
plot '{dat}' using 1:2 with linespoints lw 2 title 'total IOPS', \\
     '{dat}' using 1:3 axes x1y2 with linespoints lw 2 title 'light p99 [ms]'
"""
    gnuplot(script, out_dir)
    return png
# ------------------------------------------------------------------- main

def analyze(raws, out):
    """Everything but the files: (runs, meas, agg, targets, errs)."""
    runs, meas, errs = parse(raws)
    meas, _ = select_runs(meas)
    apply_slowdown(meas)
    agg = aggregate(meas)
    alone = alone_table(meas)
    return (runs, meas, agg,
            targets(agg, flip_agg(runs)) + startup_targets(startup_agg(runs))
            + write_targets(agg, wc_agg(runs, alone), alone_table(meas, "lower_write_mib_s")),
            errs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("raw", nargs="+")
    args = ap.parse_args()
    runs, meas, agg, tg, errs = analyze(args.raw, args.out)
    if not meas and not any(r["startup"] or r["flip"] for r in runs):
        print("analyze: no measurements", file=sys.stderr)
        return 1
    os.makedirs(args.out, exist_ok=True)
    plots_dir = os.path.join(args.out, "plots")
    os.makedirs(plots_dir, exist_ok=True)
    for f in os.listdir(plots_dir):
        os.unlink(os.path.join(plots_dir, f))
    pngs = []
    for dev in sorted({k[0] for k in agg if not k[0].startswith("calib")}):
        for wl in ("w1", "w2", "w3", "w4", "w4cg", "w5"):
            p = plot_shares(agg, dev, wl, plots_dir)
            if p:
                pngs.append(p)
        for p in (plot_cdf(meas, dev, "w2", plots_dir), plot_sweep(agg, dev, plots_dir)):
            if p:
                pngs.append(p)
    p = plot_scale(agg, plots_dir)
    if p:
        pngs.append(p)

    write_md(os.path.join(args.out, "results.md"), runs, meas, agg, tg, errs)
    for m in meas:
        for j in m["jobs"]:
            j.pop("_bins", None)
    res = {
        "runs": [{k: r[k] for k in ("label", "info", "host", "done")} for r in runs],
        "complete": all(r["done"] is not None for r in runs),
        "targets": [dict(zip(("target", "config", "figures", "result"), t))
                    for t in tg],
        "summary": [dict(dev=k[0], wl=k[1], cfg=k[2], **v)
                    for k, v in sorted(agg.items())],
        "startup": [dict(dev=k[0], cfg=k[1], **v)
                    for k, v in sorted(startup_agg(runs).items())],
        "flip": [dict(dev=k[0], wl=k[1], cfg=k[2], **v)
                 for k, v in sorted(flip_agg(runs).items())],
        "wc": [dict(dev=k[0], cfg=k[1], **v)
               for k, v in sorted(wc_agg(runs, alone_table(meas)).items())],
        "measurements": meas, "setup_errors": errs,
        "plots": [os.path.join("plots", p) for p in pngs],
    }
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        for t in tg:
            f.write(f"{t[3]:4}  {t[0]} [{t[1]}]: {t[2]}\n")
    print(f"analyze: {len(meas)} measurements, {len(agg)} groups, "
          f"{len(pngs)} plots", file=sys.stderr)
    for t in tg:
        print(f"  {t[3]:4}  {t[0]} [{t[1]}]: {t[2]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
