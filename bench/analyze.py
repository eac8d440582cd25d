#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn bench/guest.sh's BENCH lines into results.json, results.md and
PNG plots (gnuplot).

usage: bench/analyze.py --out DIR [--date D] [--host H] [--qemu Q] RAW

RAW holds the guest's lines: BENCH_INFO {...}, BENCH {...} (one per
measurement, with fio's own JSON inside), BENCH_ERR {...}, BENCH_DONE.
Every figure is the median over the repetitions of one (device,
workload, configuration); the repetitions were interleaved in the guest.
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
# and the recommended tunables.
FQ_TARGET_CFGS = ["fairq-cfq", "fairq-cfq-rec"]
CFG_ORDER = ["none", "mq-deadline", "bfq", "kyber", "dm-linear",
             "fairq-fifo", "fairq-cfq", "fairq-sfq", "fairq-cfq-rec",
             "fairq-sfq-rec"]
WL_TITLE = {
    "w1": "1: four random 4 KiB readers, iodepth 32 each",
    "w2": "2: synchronous reader (psync, iodepth 1) vs reader at iodepth 32",
    "w2alone": "2 (reference): the synchronous reader alone",
    "w3": "3: 4 KiB random reader (iodepth 16) vs 1 MiB sequential reader "
          "(iodepth 4) - byte fairness",
    "w4": "4: readers at best-effort 0, 4, 7 and one idle-class reader "
          "(iodepth 8 each)",
    "w5": "5: buffered writer (cgroup bench-w) vs direct 4 KiB reader "
          "(cgroup bench-r, iodepth 4), ext4",
    "w6qd1": "6: overhead, one 4 KiB random reader, iodepth 1",
    "w6qd32": "6: overhead, one 4 KiB random reader, iodepth 32",
}
# fairq's weights per best-effort level: weight = 8 - level (sched/).
W4_WEIGHTS = {"be0": 8, "be4": 4, "be7": 1}
DEVICE_BOUND = ["nullb-lat", "virtio", "nbd", "nullb-lat-mem"]


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def cfg_key(c):
    base = c.split("@")[0]
    return (CFG_ORDER.index(base) if base in CFG_ORDER else 99, c)


def wl_key(w):
    if w.startswith("w7-"):
        return (7, int(w[3:]))
    order = ["w1", "w2", "w2alone", "w3", "w4", "w5", "w6qd1", "w6qd32"]
    return (order.index(w) if w in order else 50, 0)


def jain(xs):
    xs = [x for x in xs if x is not None]
    if not xs or sum(xs) <= 0:
        return None
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


def fmt(v, nd=0, unit=""):
    if v is None:
        return "-"
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return "inf" if v > 0 else "-"
    if nd == 0:
        return f"{v:,.0f}{unit}"
    return f"{v:,.{nd}f}{unit}"


# ---------------------------------------------------------------- parsing

def job_figures(job):
    """One fio job's figures (read and write summed; latency of the
    direction that moved more bytes)."""
    rd, wr = job.get("read", {}), job.get("write", {})
    main = rd if rd.get("io_bytes", 0) >= wr.get("io_bytes", 0) else wr
    clat = main.get("clat_ns", {})
    pct = clat.get("percentile", {}) or {}
    runtime_ms = max(rd.get("runtime", 0), wr.get("runtime", 0))
    io_bytes = rd.get("io_bytes", 0) + wr.get("io_bytes", 0)
    ios = rd.get("total_ios", 0) + wr.get("total_ios", 0)

    def p(q):
        for k, v in pct.items():
            if abs(float(k) - q) < 1e-6:
                return v / 1000.0
        return None

    bins = clat.get("bins")
    return {
        "name": job.get("jobname"),
        "error": job.get("error", 0),
        "ioprio": job.get("job options", {}).get("prio"),
        "io_bytes": io_bytes,
        "ios": ios,
        "runtime_ms": runtime_ms,
        "iops": rd.get("iops", 0) + wr.get("iops", 0),
        "bw_kib": rd.get("bw", 0) + wr.get("bw", 0),
        "clat_mean_us": clat.get("mean", 0) / 1000.0 if clat else None,
        "p50_us": p(50), "p90_us": p(90), "p99_us": p(99),
        "p999_us": p(99.9),
        "percentiles_us": {k: v / 1000.0 for k, v in pct.items()},
        "usr_cpu": job.get("usr_cpu"), "sys_cpu": job.get("sys_cpu"),
        "ctx": job.get("ctx"),
        "_bins": bins,
    }


def parse(path):
    info, meas, errs, done = {}, [], [], None
    with open(path, errors="replace") as f:
        for line in f:
            tag, _, rest = line.partition(" ")
            try:
                obj = json.loads(rest) if rest.strip() else {}
            except json.JSONDecodeError as e:
                print(f"analyze: unreadable {tag} line ({e})", file=sys.stderr)
                continue
            if tag == "BENCH_INFO":
                info = obj
            elif tag == "BENCH_ERR":
                errs.append(obj)
            elif tag == "BENCH_DONE":
                done = obj
            elif tag == "BENCH":
                meas.append(measurement(obj))
    return info, meas, errs, done


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
    win = obj.get("win", {}) or {}
    m = {k: obj.get(k) for k in ("dev", "cfg", "wl", "rep", "rc", "wall_s",
                                 "lower", "target", "args", "err")}
    m["win"] = win
    m["fairq_stats"] = obj.get("fairq", {})
    m["slab"] = obj.get("slab", "")
    m["jobs"] = jobs
    m["w5_cgroups"] = obj.get("w5_cgroups", "")
    m["overlap_ms"] = fio_overlap_ms(obj) if obj.get("wl") == "w5" else None
    window_bytes(m, obj.get("procio"))
    ms = win.get("ms") or 0
    nio = (win.get("reads", 0) or 0) + (win.get("writes", 0) or 0)
    m["lower_iops"] = nio * 1000.0 / ms if ms else None
    m["lower_mib_s"] = ((win.get("rsect", 0) + win.get("wsect", 0)) * 512
                        / 1048576 * 1000.0 / ms) if ms else None
    m["cpu_ms"] = win.get("cpu_ms")
    m["cpu_us_per_io"] = (win["cpu_ms"] * 1000.0 / nio
                          if nio and win.get("cpu_ms") is not None else None)
    m["total_iops"] = sum(j["iops"] for j in jobs)
    m["total_mib_s"] = sum(j["bw_kib"] for j in jobs) / 1024.0
    derive_fairness(m)
    return m


def fio_overlap_ms(obj):
    """Workload 5 runs two fio processes: how long both ran at once, from
    each one's end time (its JSON's timestamp_ms) and its jobs' runtime
    plus ramp. Before the sampler waited for both (runs up to 2026-12-03
    09:23), one of them could start after the other had finished."""
    spans = []
    for fj in obj.get("fio", []):
        end = fj.get("timestamp_ms")
        rt = max((j.get("job_runtime", 0) for j in fj.get("jobs", [])), default=0)
        ramp = max((int(str((j.get("job options") or {}).get("ramp_time", 0)).rstrip("s") or 0)
                    for j in fj.get("jobs", [])), default=0)
        if end:
            spans.append((end - rt - ramp * 1000, end))
    if len(spans) < 2:
        return None
    return min(e for _, e in spans) - max(b for b, _ in spans)


def window_bytes(m, procio):
    """Each job's bytes within the sampler's window, from the fio tasks'
    /proc/TID/io read_bytes + write_bytes at its start and end. fio's own
    per-job figures are over each job's own runtime, which starts when that
    job starts: a job that is starved at first (the idle-class reader) is
    then measured later, over a different stretch of time, than the others.
    Jobs are the last len(jobs) task ids in creation order (fio's main
    process and its helper thread come first); workload 5's two fio runs
    are told apart by direction."""
    for j in m["jobs"]:
        j["win_bytes"] = None
    if not procio or len(procio) < 2 or not procio[1]:
        return

    def table(text):
        t = {}
        for e in text.split():
            f = e.split(":")
            if len(f) == 4:
                t[int(f[1])] = (int(f[2]), int(f[3]))
        return t

    a, b = table(procio[0]), table(procio[1])
    delta = {}
    for tid, (rb, wb) in b.items():
        ra, wa = a.get(tid, (0, 0))
        delta[tid] = (rb - ra, wb - wa)
    jobs = m["jobs"]
    if m["wl"] == "w5":
        for j in jobs:
            k = 1 if j["name"] == "writer" else 0
            best = max(delta.values(), key=lambda d: d[k], default=None)
            j["win_bytes"] = best[k] if best else None
        return
    tids = sorted(set(a) | set(b))
    if len(tids) < len(jobs):
        return
    for j, tid in zip(jobs, tids[-len(jobs):]):
        d = delta.get(tid)
        j["win_bytes"] = sum(d) if d else None


def derive_fairness(m):
    """Jain's index and max/min over each process's throughput in bytes
    (workload 4: divided by its weight; the idle-class reader is left
    out and reported as its own share)."""
    jobs = m["jobs"]
    if m["wl"] == "w4":
        fair = [j for j in jobs if j["name"] in W4_WEIGHTS]
        xs = [j["bw_kib"] / W4_WEIGHTS[j["name"]] for j in fair]
        win = all(j.get("win_bytes") is not None for j in jobs)
        val = (lambda j: j["win_bytes"]) if win else (lambda j: j["bw_kib"])
        tot = sum(val(j) for j in jobs) or 1
        wsum = sum(W4_WEIGHTS.values())
        m["w4_share"] = {j["name"]: val(j) / tot for j in jobs}
        be_tot = sum(val(j) for j in fair) or 1
        m["w4_dev"] = {j["name"]: (val(j) / be_tot)
                       / (W4_WEIGHTS[j["name"]] / wsum) - 1 for j in fair}
    else:
        xs = [j["bw_kib"] for j in jobs]
    m["jain_fio"] = jain(xs) if len(xs) > 1 else None
    # The same over the common window, when every job's bytes are known.
    wjobs = [j for j in jobs if m["wl"] != "w4" or j["name"] in W4_WEIGHTS]
    if len(wjobs) > 1 and all(j.get("win_bytes") is not None for j in wjobs):
        wx = [j["win_bytes"] / (W4_WEIGHTS[j["name"]] if m["wl"] == "w4" else 1)
              for j in wjobs]
        m["jain_win"] = jain(wx)
        tot = sum(j["win_bytes"] for j in jobs) or 1
        m["win_share"] = {j["name"]: j["win_bytes"] / tot for j in jobs}
    else:
        m["jain_win"], m["win_share"] = None, None
    # Jain's index as reported: the common window's where there is one.
    m["jain"] = m["jain_win"] if m["jain_win"] is not None else m["jain_fio"]
    # What counting noise alone gives: each of n jobs completes a Poisson
    # number of I/Os with mean mu, so E[Jain] ~ 1 / (1 + 1/mu).
    ios = [j["ios"] for j in jobs]
    mu = sum(ios) / len(ios) if ios else 0
    m["jain_noise"] = 1 / (1 + 1 / mu) if mu > 0 else None
    m["ios_per_job"] = mu
    lo, hi = (min(xs), max(xs)) if xs else (0, 0)
    m["maxmin"] = (hi / lo if lo > 0 else float("inf")) if len(xs) > 1 else None
    light = next((j for j in jobs if j["name"] in ("light", "reader")), None)
    m["light_p50_us"] = light["p50_us"] if light else None
    m["light_p99_us"] = light["p99_us"] if light else None
    tot = sum(j["bw_kib"] for j in jobs)
    m["light_share"] = light["bw_kib"] / tot if light and tot else None
    if light and m.get("win_share"):
        m["light_share"] = m["win_share"].get(light["name"])


# ------------------------------------------------------------ aggregation

def aggregate(meas):
    groups = {}
    for m in meas:
        groups.setdefault((m["dev"], m["wl"], m["cfg"]), []).append(m)
    agg = {}
    for key, ms in groups.items():
        # Workload 5: a repetition in which the writer and the reader did
        # not both run through the window measured nothing; leave it out.
        W5_DROPPED[key] = sum(1 for m in ms if not w5_valid(m))
        ms = [m for m in ms if w5_valid(m)]
        if not ms:
            continue
        a = {"n": len(ms), "reps": [m["rep"] for m in ms]}
        for k in ("total_iops", "total_mib_s", "jain", "jain_fio", "jain_win", "maxmin",
                  "light_p50_us", "light_p99_us", "light_share",
                  "lower_iops", "lower_mib_s", "cpu_us_per_io", "cpu_ms",
                  "jain_noise", "ios_per_job"):
            a[k] = median([m.get(k) for m in ms])
        names = []
        for m in ms:
            for j in m["jobs"]:
                if j["name"] not in names:
                    names.append(j["name"])
        a["jobs"] = {}
        for n in names:
            js = [j for m in ms for j in m["jobs"] if j["name"] == n]
            a["jobs"][n] = {k: median([j[k] for j in js])
                            for k in ("iops", "bw_kib", "p50_us", "p99_us")}
        ws = [m["win_share"] for m in ms if m.get("win_share")]
        a["win_share"] = ({n: median([w.get(n) for w in ws]) for n in names}
                          if len(ws) == len(ms) else None)
        if key[1] == "w4":
            a["w4_share"] = {n: median([m["w4_share"].get(n) for m in ms])
                             for n in names}
            a["w4_dev"] = {n: median([m["w4_dev"].get(n) for m in ms])
                           for n in W4_WEIGHTS}
        mem = [m["fairq_stats"].get("mem_bytes") for m in ms
               if m["fairq_stats"]]
        flows = [m["fairq_stats"].get("flows") for m in ms if m["fairq_stats"]]
        a["fairq_mem_bytes"] = median(mem)
        a["fairq_flows"] = median(flows)
        a["fairq_flows_max"] = max([f for f in flows if f is not None],
                                   default=None)
        a["fairq_pool"] = median([m["fairq_stats"].get("flows_max") for m in ms
                                  if m["fairq_stats"]])
        a["rc_nonzero"] = sum(1 for m in ms if m["rc"])
        if key[1] == "w5":
            a["w5_cgroups"] = next((m["w5_cgroups"] for m in ms
                                    if m.get("w5_cgroups")), "")
            a["w5_flows"] = [[ln.split()[0] + " " + next(
                (f for f in ln.split() if f.startswith("bytes=")), "")
                for ln in m["fairq_stats"].get("flow_lines") or []]
                for m in ms if m["fairq_stats"]]
        agg[key] = a
    return agg


W5_DROPPED = {}


def w5_valid(m):
    ov, win = m.get("overlap_ms"), (m.get("win") or {}).get("ms")
    return m["wl"] != "w5" or ov is None or not win or ov >= 0.9 * win


def get(agg, dev, wl, cfg, k):
    a = agg.get((dev, wl, cfg))
    return a.get(k) if a else None


def ratio(x, y):
    if x is None or y is None or y == 0:
        return None
    return x / y


# ---------------------------------------------------------------- targets

def targets(agg):
    """[(target, config, figure text, PASS/MISS/n.a.)]"""
    out = []
    devs = sorted({k[0] for k in agg})
    bound = [d for d in DEVICE_BOUND if d in devs]

    def add(name, cfg, text, ok):
        out.append((name, cfg, text,
                    "n/a" if ok is None else ("PASS" if ok else "MISS")))

    for fq in FQ_TARGET_CFGS:
        for d in bound:
            for wl in ("w2", "w3", "w4"):
                jf = get(agg, d, wl, fq, "jain")
                jm = get(agg, d, wl, "mq-deadline", "jain")
                jb = get(agg, d, wl, "bfq", "jain")
                if jf is None:
                    continue
                add(f"W{wl[1]} Jain >= 0.95 ({d})", fq,
                    f"{fq} {fmt(jf, 3)}; mq-deadline {fmt(jm, 3)}; "
                    f"bfq {fmt(jb, 3)}", jf >= 0.95)
            dv = get(agg, d, "w4", fq, "w4_dev")
            if dv:
                worst = max(abs(v) for v in dv.values() if v is not None)
                add(f"W4 shares within 15% of weights 8:4:1 ({d})", fq,
                    ", ".join(f"{n} {v * 100:+.0f}%" for n, v in dv.items()
                              if v is not None), worst <= 0.15)
            pf = get(agg, d, "w2", fq, "light_p99_us")
            pm = get(agg, d, "w2", "mq-deadline", "light_p99_us")
            if pf is not None and pm:
                add(f"W2 light p99 <= 1/3 of mq-deadline's ({d})", fq,
                    f"{fmt(pf)} us vs {fmt(pm)} us (ratio {pf / pm:.2f})",
                    pf <= pm / 3)
            tf = get(agg, d, "w1", fq, "total_iops")
            tm = get(agg, d, "w1", "mq-deadline", "total_iops")
            if tf is not None and tm:
                add(f"W1 total >= 95% of mq-deadline's ({d})", fq,
                    f"{fmt(tf)} vs {fmt(tm)} IOPS ({tf / tm * 100:.0f}%)",
                    tf >= 0.95 * tm)
        jf = get(agg, "nullb-bw-mem", "w5", fq + "@cgroup", "jain") \
            if (("nullb-bw-mem", "w5", fq + "@cgroup") in agg) else None
    fq = "fairq-cfq"
    i_fq = get(agg, "nullb-fast", "w6qd32", fq, "total_iops")
    i_dm = get(agg, "nullb-fast", "w6qd32", "dm-linear", "total_iops")
    c_fq = get(agg, "nullb-fast", "w6qd32", fq, "cpu_us_per_io")
    c_dm = get(agg, "nullb-fast", "w6qd32", "dm-linear", "cpu_us_per_io")
    if i_fq is not None and i_dm:
        add("W6 IOPS >= 95% of dm-linear's (iodepth 32)", fq,
            f"{fmt(i_fq)} vs {fmt(i_dm)} ({i_fq / i_dm * 100:.0f}%)",
            i_fq >= 0.95 * i_dm)
    if c_fq is not None and c_dm:
        add("W6 CPU per I/O within 10% of dm-linear's (iodepth 32)", fq,
            f"{c_fq:.0f} vs {c_dm:.0f} us/IO ({(c_fq / c_dm - 1) * 100:+.0f}%)",
            c_fq <= 1.10 * c_dm)
    w7cfgs = sorted({k[2] for k in agg if k[1].startswith("w7-")}, key=cfg_key)
    for cfg in w7cfgs:
        for d in devs:
            j16 = get(agg, d, "w7-16", cfg, "jain")
            j1k = get(agg, d, "w7-1024", cfg, "jain")
            n1k = get(agg, d, "w7-1024", cfg, "jain_noise")
            # Totals from the lower device's window: fio's per-job rates
            # are over staggered per-thread windows and do not add up.
            t16 = get(agg, d, "w7-16", cfg, "lower_iops")
            t1k = get(agg, d, "w7-1024", cfg, "lower_iops")
            if None in (j16, j1k, t16, t1k):
                continue
            ok = (j1k >= 0.95 * j16 and t1k >= 0.95 * t16) \
                if cfg.startswith("fairq") else None
            add(f"W7 1,024 vs 16 flows within 5% ({d})", cfg,
                f"Jain {j1k:.3f} vs {j16:.3f} (counting noise alone at "
                f"1,024: {fmt(n1k, 3)}), lower IOPS {fmt(t1k)} vs "
                f"{fmt(t16)} ({t1k / t16 * 100:.0f}%)", ok)
    return out


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


def tput_unit(wl):
    return "MiB/s" if wl in ("w3", "w5") else "IOPS"


def job_tput(j, wl):
    return fmt(j["bw_kib"] / 1024.0, 2) if tput_unit(wl) == "MiB/s" \
        else fmt(j["iops"])


def section_workload(agg, dev, wl):
    keys = sorted([k for k in agg if k[0] == dev and k[1] == wl],
                  key=lambda k: cfg_key(k[2]))
    if not keys:
        return ""
    names = []
    for k in keys:
        for n in agg[k]["jobs"]:
            if n not in names:
                names.append(n)
    unit = tput_unit(wl)
    many = len(names) > 8
    head = ["config"]
    if not many:
        head += [f"{n} {unit}" for n in names]
    head += [f"total {unit}", "Jain", "Jain (fio)", "max/min"]
    has_lat = wl in ("w2", "w2alone", "w5")
    if has_lat:
        who = "reader" if wl == "w5" else "light"
        head += [f"{who} share", f"{who} p50 us", f"{who} p99 us"]
    if wl == "w4":
        head += ["idle share"]
    if wl == "w5":
        head += ["lower write MiB/s"]
    if many:
        head += ["I/Os per flow", "Jain from noise alone"]
    head += ["lower IOPS", "CPU us/IO", "n"]
    rows = []
    for k in keys:
        a = agg[k]
        r = [k[2]]
        if not many:
            r += [job_tput(a["jobs"][n], wl) if n in a["jobs"] else "-"
                  for n in names]
        tot = a["total_mib_s"] if unit == "MiB/s" else a["total_iops"]
        r += [fmt(tot, 2 if unit == "MiB/s" else 0), fmt(a["jain"], 3),
              fmt(a["jain_fio"], 3), fmt(a["maxmin"], 2)]
        if has_lat:
            r += [fmt(a["light_share"], 3), fmt(a["light_p50_us"]),
                  fmt(a["light_p99_us"])]
        if wl == "w4":
            r += [fmt((a.get("w4_share") or {}).get("idle"), 3)]
        if wl == "w5":
            r += [fmt(a.get("lower_write_mib_s"), 2)]
        if many:
            r += [fmt(a["ios_per_job"], 1), fmt(a["jain_noise"], 3)]
        r += [fmt(a["lower_iops"]), fmt(a["cpu_us_per_io"]), a["n"]]
        rows.append(r)
    s = f"#### {dev}, workload {WL_TITLE.get(wl, wl)}\n\n" + md_table(head, rows)
    if wl.startswith("w7-"):
        s += "\n" + scale_extra(agg, keys)
    if wl == "w5":
        s += "\n" + w5_extra(agg, keys)
        nd = [f"{k[2]} {n}" for k, n in W5_DROPPED.items()
              if n and k[0] == dev and k[1] == wl]
        if nd:
            s += ("- repetitions left out because the writer and the reader "
                  "did not both run through the window (their fio runs were "
                  "started apart; n counts the rest; a configuration with "
                  "none left has no row): " + ", ".join(nd) + "\n")
    return s + "\n"


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
        slots = a.get("fairq_pool") or 0
        rows.append([k[2], fmt(a["fairq_mem_bytes"]), fmt(a.get("fairq_flows_max")),
                     fmt(slots), fmt(a["fairq_mem_bytes"] / slots if slots else None)])
    if not rows:
        return ""
    return ("fairq's memory (stats `mem_bytes`: the device and its flow pool, "
            "allocated when powered on; it does not grow with the flows):\n\n"
            + md_table(["config", "mem_bytes", "flows at window end",
                        "pool slots (max_flows)", "bytes per slot"], rows))


def headline(agg):
    rows = []
    for (dev, wl, cfg) in sorted(agg, key=lambda k: (k[0], wl_key(k[1]),
                                                     cfg_key(k[2]))):
        if not cfg.startswith("fairq") or wl == "w2alone":
            continue
        a = agg[(dev, wl, cfg)]
        r = [dev, wl, cfg]
        # The throughput each table shows: MiB/s for w3/w5, the lower
        # device's IOPS for w7 (fio's per-thread rates do not add up).
        tk = "total_mib_s" if tput_unit(wl) == "MiB/s" else \
            ("lower_iops" if wl.startswith("w7-") else "total_iops")
        for base in ("mq-deadline", "bfq", "dm-linear"):
            b = agg.get((dev, wl, base))
            r.append(fmt(ratio(a[tk], b[tk]), 2) if b else "-")
        for base in ("mq-deadline", "bfq"):
            b = agg.get((dev, wl, base))
            r.append(f"{fmt(a['jain'], 3)} / {fmt(b['jain'], 3)}"
                     if b and a["jain"] is not None else "-")
        b = agg.get((dev, wl, "mq-deadline"))
        r.append(fmt(ratio(a["light_p99_us"], b["light_p99_us"]), 2)
                 if b else "-")
        rows.append(r)
    return md_table(["device", "wl", "fairq config", "tput / mq-deadline",
                     "tput / bfq", "tput / dm-linear",
                     "Jain fairq / mq-deadline", "Jain fairq / bfq",
                     "light p99 / mq-deadline"], rows)


def vs_bfq(agg):
    lines = []
    for (dev, wl, cfg) in sorted(agg, key=lambda k: (k[0], wl_key(k[1]))):
        if cfg != "bfq" or wl in ("w2alone",) or wl.startswith("w6"):
            continue
        b = agg[(dev, wl, cfg)]
        best = None
        for fq in ("fairq-cfq", "fairq-cfq-rec", "fairq-cfq@cgroup",
                   "fairq-cfq-rec@cgroup"):
            a = agg.get((dev, wl, fq))
            if a and a["jain"] is not None and (best is None or
                                                 a["jain"] > best[1]["jain"]):
                best = (fq, a)
        if not best or b["jain"] is None:
            continue
        fq, a = best
        who = "fairq" if a["jain"] > b["jain"] + 0.005 else \
            ("bfq" if b["jain"] > a["jain"] + 0.005 else "tie")
        unit = tput_unit(wl)
        ta = a["total_mib_s"] if unit == "MiB/s" else a["total_iops"]
        tb = b["total_mib_s"] if unit == "MiB/s" else b["total_iops"]
        lines.append(f"- {dev} {wl}: fairer: **{who}** (Jain {fq} "
                     f"{a['jain']:.3f} vs bfq {b['jain']:.3f}); throughput "
                     f"{fmt(ta, 2 if unit == 'MiB/s' else 0)} vs "
                     f"{fmt(tb, 2 if unit == 'MiB/s' else 0)} {unit}")
    return "\n".join(lines) + "\n"


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
        rows.append([d, what, fmt(nominal), fmt(m["total_iops"]),
                     fmt(ratio(m["total_iops"], nominal), 2),
                     fmt(m["lower_iops"]), fmt(busy, 0, "%")])
    if not rows:
        return ""
    return md_table(["device", "setting", "nominal IOPS", "fio IOPS (w1, raw none)",
                     "measured / nominal", "lower IOPS (window)",
                     "guest CPU busy"], rows)


def write_md(path, info, meas, agg, tg, errs, done, args, hostload):
    kernel = info.get("kernel", "?")
    s = "# fairq benchmark results\n\n"
    s += (f"- date: {args.date}; host: {args.host}; {args.qemu}, TCG "
          f"(no KVM), guest {info.get('cpus')} vCPUs, "
          f"{info.get('mem_mb')} MiB\n")
    s += (f"- guest kernel: Debian {kernel}; {info.get('fio')}; fairq.ko "
          f"{'loaded' if info.get('fairq') else 'NOT available'}\n")
    s += (f"- mode {info.get('mode')}: {info.get('reps')} repetitions, "
          f"interleaved (every configuration once per round), "
          f"{info.get('runtime')} s measured after {info.get('ramp')} s ramp; "
          f"figures are medians of the repetitions\n")
    s += (f"- recommended fairq tunables (the `-rec` configurations): "
          f"`{info.get('fairq_rec')}`\n")
    if hostload:
        s += (f"- host load average during the run: min {min(hostload):.1f}, "
              f"median {statistics.median(hostload):.1f}, max "
              f"{max(hostload):.1f} (other VMs share these host CPUs; "
              f"absolute figures move with it, the interleaved ratios less)\n")
    s += (f"- {len(meas)} measurements"
          + (f", {len(errs)} set-ups failed" if errs else "")
          + ("" if done else "; the guest did not finish (partial run)")
          + "\n\n")
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
    s += "## Headline ratios (same run, medians)\n\n" + headline(agg) + "\n"
    s += "## fairq against bfq\n\n" + vs_bfq(agg) + "\n"
    s += "## Tables\n\n"
    s += ("Throughput per process and total from fio; **Jain** over each "
          "process's bytes in the common window (from /proc/TID/io, where "
          "the run recorded it; else fio's), **Jain (fio)** over fio's "
          "per-job bytes/s, each over that job's own runtime; max/min over "
          "fio's per-job bytes/s (workload 4: both divided by the weight "
          "8:4:1, idle-class reader excluded); latencies are fio's "
          "completion latency percentiles; lower IOPS and CPU us/IO from "
          "the lower device's counters and /proc/stat over the steady "
          "window; n = repetitions.\n\n")
    for dev in sorted({k[0] for k in agg}, key=lambda d: (d.startswith("calib"), d)):
        if dev.startswith("calib"):
            continue
        s += f"### {dev}\n\n"
        for wl in sorted({k[1] for k in agg if k[0] == dev}, key=wl_key):
            s += section_workload(agg, dev, wl)
    if errs:
        s += "## Failed set-ups\n\n" + "".join(
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
    keys = sorted([k for k in agg if k[0] == dev and k[1] == wl],
                  key=lambda k: cfg_key(k[2]))
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
            jobs = agg[k]["jobs"]
            ws = agg[k].get("win_share")
            if ws:
                tot = sum(v or 0 for v in ws.values()) or 1
                vals = [(ws.get(n) or 0) / tot for n in names]
            else:
                tot = sum((jobs[n]["bw_kib"] or 0) for n in jobs) or 1
                vals = [(jobs[n]["bw_kib"] or 0) / tot if n in jobs else 0
                        for n in names]
            f.write(k[2] + " " + " ".join(f"{v:.4f}" for v in vals) + "\n")
    png = f"share_{dev}_{wl}.png"
    cols = " ".join(str(i) for i in range(2, len(names) + 2))
    # Dashed lines where the shares would end if the scheduler were fair:
    # equal shares, or for workload 4 the weights 8:4:1 (idle: 0).
    if wl == "w4":
        wsum = sum(W4_WEIGHTS.values())
        cuts, acc = [], 0
        for n in names[:-1]:
            acc += W4_WEIGHTS.get(n, 0)
            cuts.append(acc / wsum)
    else:
        cuts = [k / len(names) for k in range(1, len(names))]
    arrows = "\n".join(f"set arrow from graph 0, first {c:.4f} to graph 1, "
                       f"first {c:.4f} nohead dt 2 lw 1.5 lc rgb 'black' front"
                       for c in cuts)
    fair = "weights 8:4:1:0" if wl == "w4" else "equal shares"
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
    from fio's json+ histogram bins, all repetitions pooled."""
    per_cfg = {}
    for m in meas:
        if m["dev"] != dev or m["wl"] not in (wl, "w2alone"):
            continue
        for j in m["jobs"]:
            if j["name"] == "light" and j.get("_bins"):
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
                                             a["total_iops"]))
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


# ------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--date", default="")
    ap.add_argument("--host", default="")
    ap.add_argument("--qemu", default="")
    ap.add_argument("raw")
    args = ap.parse_args()
    info, meas, errs, done = parse(args.raw)
    if not meas:
        print("analyze: no measurements", file=sys.stderr)
        return 1
    for m in meas:
        win = m["win"]
        m["lower_write_mib_s"] = (win.get("wsect", 0) * 512 / 1048576 * 1000.0
                                  / win["ms"]) if win.get("ms") else None
    agg = aggregate(meas)
    for key, a in agg.items():
        a["lower_write_mib_s"] = median([m["lower_write_mib_s"] for m in meas
                                         if (m["dev"], m["wl"], m["cfg"]) == key])
    tg = targets(agg)
    hostload = []
    lp = os.path.join(args.out, "hostload.txt")
    if os.path.exists(lp):
        with open(lp) as f:
            hostload = [float(x.split()[0]) for x in f if x.strip()]

    os.makedirs(args.out, exist_ok=True)
    plots_dir = os.path.join(args.out, "plots")
    os.makedirs(plots_dir, exist_ok=True)
    pngs = []
    for dev in sorted({k[0] for k in agg if not k[0].startswith("calib")}):
        for wl in ("w1", "w2", "w3", "w4", "w5"):
            p = plot_shares(agg, dev, wl, plots_dir)
            if p:
                pngs.append(p)
        p = plot_cdf(meas, dev, "w2", plots_dir)
        if p:
            pngs.append(p)
    p = plot_scale(agg, plots_dir)
    if p:
        pngs.append(p)

    write_md(os.path.join(args.out, "results.md"), info, meas, agg, tg, errs,
             done, args, hostload)
    for m in meas:
        for j in m["jobs"]:
            j.pop("_bins", None)
    res = {
        "info": info, "date": args.date, "host": args.host, "qemu": args.qemu,
        "complete": done is not None, "host_loadavg": hostload,
        "targets": [dict(zip(("target", "config", "figures", "result"), t))
                    for t in tg],
        "summary": [dict(dev=k[0], wl=k[1], cfg=k[2], **v)
                    for k, v in sorted(agg.items())],
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
