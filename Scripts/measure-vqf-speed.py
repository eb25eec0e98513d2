#!/usr/bin/env python3
"""Time VQF 2.1.2's C++ update (through its Python binding's updateBatch, one call per run, so the binding's
per-call cost is spread over 2 M samples), 6D and 9D: the reference for the fusion benchmarks in
Docs/Performance.md. Needs `pip install vqf numpy`. Prints ns per sample, best of 3.

Input: by default 2 M synthetic samples at 100 Hz; with a trace file (the canonical CSV with all ten columns
t, ax…az, gx…gz, mx…mz in every row, e.g. Recordings/broad-slow-rotation-excerpt.csv or a broad-dev trial) its
samples at its own rate, repeated to 2 M, as FusionBenchmarks' `…, recording` benchmarks replay it."""
import sys, time, numpy as np
from vqf import VQF
N=2_000_000
if len(sys.argv) > 1:
    rows=[l for l in open(sys.argv[1]) if not l.startswith('#')][1:]
    d=np.array([[float(x) for x in r.split(',')] for r in rows])
    reps=-(-N//len(d))
    interval=d[1,0]-d[0,0]
    # Core Motion's acceleration in g to VQF's specific force in m/s².
    acc=np.ascontiguousarray(np.tile(-9.80665*d[:,1:4],(reps,1))[:N])
    gyr=np.ascontiguousarray(np.tile(d[:,4:7],(reps,1))[:N])
    mag=np.ascontiguousarray(np.tile(d[:,7:10],(reps,1))[:N])
else:
    rng=np.random.default_rng(1)
    interval=0.01
    t=np.arange(N)*interval
    gyr=np.ascontiguousarray(np.stack([0.5*np.sin(t*1.3),0.3*np.cos(t*0.7),0.2*np.sin(t*2.1)],1)+rng.normal(0,0.01,(N,3)))
    acc=np.ascontiguousarray(np.stack([np.sin(t*0.2),np.cos(t*0.3)*0.5,9.81*np.ones(N)],1)+rng.normal(0,0.05,(N,3)))
    mag=np.ascontiguousarray(np.stack([20+np.sin(t*0.1),np.cos(t*0.1),-40*np.ones(N)],1))
for label,args in (("6D",(gyr,acc)),("9D",(gyr,acc,mag))):
    best=1e9
    for r in range(3):
        v=VQF(interval)
        s=time.perf_counter(); v.updateBatch(*args); e=time.perf_counter()-s
        best=min(best,e)
    print(label, f"{best/N*1e9:.0f} ns/sample = {N/best/1e6:.2f} M/s")
