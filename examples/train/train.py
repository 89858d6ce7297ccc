"""A small PyTorch training loop whose Dataset waits for I/O on every item.

usage: python3 train.py [--workers N] [--steps S] [--wait MS] [--truth FILE]

Each item costs WAIT ms of waiting (a sleep standing in for a read from
disk or the network) and a little decoding; the model is a small MLP. With
--workers 0 the main process loads every batch itself, so the step waits
for data most of its time; with --workers 2 the DataLoader's worker
processes load the next batches while the step computes.

The loop times itself the way training scripts do (data_time: waiting for
the next batch; step_time: the whole iteration) and writes the totals to
--truth as JSON, so that a profiler's answer can be checked against it.
"""
import argparse
import json
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class SlowDataset(Dataset):
    def __init__(self, n, wait_s):
        self.n = n
        self.wait_s = wait_s

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        time.sleep(self.wait_s)  # the read
        g = torch.Generator().manual_seed(i)
        x = torch.rand(64, generator=g)  # the decoding
        return x, int(x.sum() > 32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--wait", type=float, default=4.0, help="ms per item")
    ap.add_argument("--truth", default=None)
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    ds = SlowDataset(a.steps * a.batch, a.wait / 1000.0)
    dl = DataLoader(ds, batch_size=a.batch, num_workers=a.workers, shuffle=False)
    model = nn.Sequential(nn.Linear(64, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    data_s = step_s = 0.0
    steps = []
    t0 = time.perf_counter()
    it = iter(dl)
    while True:
        t = time.perf_counter()
        try:
            x, y = next(it)
        except StopIteration:
            break
        d = time.perf_counter() - t
        opt.zero_grad()
        for _ in range(4):  # the compute: a few passes per batch
            loss = loss_fn(model(x), y)
            loss.backward()
        opt.step()
        s = time.perf_counter() - t
        steps.append({"data_time": d, "step_time": s})
        data_s += d
        step_s += s
    total = time.perf_counter() - t0
    out = {"workers": a.workers, "steps": len(steps), "data_s": data_s, "step_s": step_s,
           "data_share": data_s / step_s, "total_s": total, "per_step": steps}
    if a.truth:
        with open(a.truth, "w") as f:
            json.dump(out, f)
    print("workers=%d steps=%d data_share=%.3f step=%.1f ms" % (
        a.workers, len(steps), data_s / step_s, 1000 * step_s / len(steps)))


if __name__ == "__main__":
    main()
