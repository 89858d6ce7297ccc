"""A real PyTorch DDP job on the CPU (gloo) with one rank slowed on purpose
(t120): every step each rank runs forward and backward, DDP all-reduces the
gradients inside backward, and the rank named by SLOW_RANK first spends
extra time in slow_down(), so the other ranks wait for it in that
all-reduce. Run by torchrun (RANK, WORLD_SIZE, MASTER_ADDR... set)."""
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def slow_down(seconds):
    """the straggler's extra work: pure Python, on its profile by name"""
    end = time.perf_counter() + seconds
    s = 0
    while time.perf_counter() < end:
        for i in range(1000):
            s += i
    return s


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    slow = int(os.environ.get("SLOW_RANK", "1"))
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 80
    torch.manual_seed(0)
    torch.set_num_threads(1)
    net = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    model = DDP(net)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(32, 128)
    y = torch.randint(0, 10, (32,))
    for _ in range(steps):
        if rank == slow:
            slow_down(0.05)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()  # DDP all-reduces the gradients here: the fast ranks wait
        opt.step()
    dist.barrier()
    if rank == 0:
        print("loss %.4f" % loss.item())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
