#!/usr/bin/env python3
"""A crowded pedestrian track table for measuring smart_eval's memory (docs/transformer.md,
"Rollouts"): --walkers pedestrians at once in a 40 x 40 m square, each walking at 0.8-1.6 m/s
with a slowly wandering heading, sampled at 2.5 Hz (ETH/UCY's rate) for --seconds, as one
scenario in Argoverse 2's columns (scenes_import reads it; docs/scenes-import.md).
usage: perf/crowd_tracks.py OUT.csv [--walkers 80] [--seconds 60] [--seed 1]"""
import argparse
import math
import random

p = argparse.ArgumentParser()
p.add_argument("out")
p.add_argument("--walkers", type=int, default=80)
p.add_argument("--seconds", type=float, default=60)
p.add_argument("--seed", type=int, default=1)
a = p.parse_args()
random.seed(a.seed)
rate = 2.5
with open(a.out, "w") as f:
    f.write("scenario_id,track_id,timestep,position_x,position_y\n")
    for w in range(a.walkers):
        x, y = random.uniform(0, 40), random.uniform(0, 40)
        heading, speed = random.uniform(0, 2 * math.pi), random.uniform(0.8, 1.6)
        for t in range(int(a.seconds * rate)):
            heading += random.gauss(0, 0.08)
            x += speed * math.cos(heading) / rate
            y += speed * math.sin(heading) / rate
            f.write(f"crowd,{w},{t},{x:.3f},{y:.3f}\n")
