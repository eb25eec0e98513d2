#!/usr/bin/env python3
"""Time VQF 2.1.2's C++ update (through its Python binding's updateBatch, one call per run, so the binding's
per-call cost is spread over 2 M samples) at 100 Hz, 6D and 9D: the reference for the fusion benchmarks in
Docs/Performance.md. Needs `pip install vqf numpy`. Prints ns per sample, best of 3."""
import time, numpy as np
from vqf import VQF
N=2_000_000
rng=np.random.default_rng(1)
t=np.arange(N)*0.01
gyr=np.ascontiguousarray(np.stack([0.5*np.sin(t*1.3),0.3*np.cos(t*0.7),0.2*np.sin(t*2.1)],1)+rng.normal(0,0.01,(N,3)))
acc=np.ascontiguousarray(np.stack([np.sin(t*0.2),np.cos(t*0.3)*0.5,9.81*np.ones(N)],1)+rng.normal(0,0.05,(N,3)))
mag=np.ascontiguousarray(np.stack([20+np.sin(t*0.1),np.cos(t*0.1),-40*np.ones(N)],1))
for label,args in (("6D",(gyr,acc)),("9D",(gyr,acc,mag))):
    best=1e9
    for r in range(3):
        v=VQF(0.01)
        s=time.perf_counter(); v.updateBatch(*args); e=time.perf_counter()-s
        best=min(best,e)
    print(label, f"{best/N*1e9:.0f} ns/sample = {N/best/1e6:.2f} M/s")
