#!/bin/bash
# Every scan rule's examples are tests: its bad example produces exactly one
# finding, of that rule, and its good example none, with all rules on
# (--advisory); an advisory rule finds nothing by default and runs when its
# own id is selected (a prefix such as PY does not turn it on).
. "$PERFLOOP_SRC/tests/cli/lib.sh"
"$PERFLOOP" scan --list-rules --format json >rules.json || fail "--list-rules failed"
python3 - "$PERFLOOP" <<'PY' || fail "rule examples"
import json, subprocess, sys
pl = sys.argv[1]
rules = json.load(open("rules.json"))
py = [r for r in rules if r["language"] == "python"]
c = [r for r in rules if r["language"] == "c"]
bad = []
for r in rules:
    ext = ".py" if r["language"] == "python" else ".c"
    for kind in ("bad", "good"):
        path = f"{r['id']}-{kind}{ext}"
        open(path, "w").write(r[kind])
        p = subprocess.run([pl, "scan", "--advisory", "--format", "json", path], capture_output=True, text=True)
        if p.returncode != 0:
            bad.append(f"{path}: exit {p.returncode}: {p.stderr.strip()}")
            continue
        if "parse error" in p.stderr:
            bad.append(f"{path}: the example does not parse: {p.stderr.strip()}")
        got = [(f["leaf"], f["location"]["line"]) for f in json.loads(p.stdout)["findings"]]
        ids = [g[0] for g in got]
        if kind == "bad" and ids != [r["id"]]:
            bad.append(f"{path}: expected exactly one {r['id']}, got {got}")
        if kind == "good" and ids:
            bad.append(f"{path}: expected none, got {got}")
        if kind == "bad" and r["advisory"]:
            # off by default, on when named in --select
            for args, want in (([], []), (["--select", r["id"].lower()], [r["id"]]),
                               (["--select", r["id"][:2]], [])):
                q = subprocess.run([pl, "scan", "--format", "json", *args, path],
                                   capture_output=True, text=True)
                got2 = [f["leaf"] for f in json.loads(q.stdout)["findings"]]
                if got2 != want:
                    bad.append(f"{path}: advisory, with {args or 'defaults'}: expected {want}, got {got2}")
print(f"{len(rules)} rules ({len(py)} Python, {len(c)} C), {2 * len(rules)} examples")
for b in bad:
    print("FAIL:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
# misfire classes that must stay silent (#13): a host sync in a program that
# never uses a device (the word only in a comment), and DataLoader options
# passed through **kwargs
mkdir -p quiet
cat >quiet/cpu_train.py <<'PY'
# would run on cuda one day
def train(model, loader, opt, loss_fn):
    for x, y in loader:
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        seen = loss.item()
PY
cat >quiet/gpu_train.py <<'PY'
def train(model, loader, opt, loss_fn, device):
    for x, y in loader:
        loss = loss_fn(model(x.to(device)), y.to(device))
        loss.backward()
        opt.step()
        seen = loss.item()
        acc = (model(x).argmax(1) == y.to(device)).float().mean().item()
PY
# and C: a loop over the command line is argument parsing, run once
cat >quiet/args.c <<'C'
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv)
{
	char buf[256] = "";
	for (int i = 1; i < argc; i++) {
		strcat(buf, argv[i]);
		fflush(stdout);
	}
	puts(buf);
	return 0;
}
C
run "$PERFLOOP" scan --format json quiet
expect_rc 0
check out "[(f['path'].split('/')[-1], f['leaf']) for f in d['findings'] if f['leaf'] == 'PY010'] == [('gpu_train.py', 'PY010')]"
# several syncs in one step: one finding that names the others' lines
check out "[(f['evidence']['numbers']['occurrences'], f['evidence']['text']) for f in d['findings'] if f['leaf'] == 'PY010'] == [(2, 'seen = loss.item() (also in this loop: line 7)')]"
check out "[f['leaf'] for f in d['findings'] if f['path'].endswith('args.c')] == []"
# more misfire classes seen on real code (tests/scan-real), each beside the
# shape that must still be found: a query's rows iterated (one query) vs a
# query per row; a flush under a flag vs every iteration; strcat onto a
# buffer reset each iteration; a synchronize that times a layer; moving
# each child module to its device once
mkdir -p quiet2
cat >quiet2/db.py <<'PY'
def load(conn, ids):
    names = {}
    for r in conn.execute("SELECT id, name FROM t"):
        names[r[0]] = r[1]
    rows = [r for r in conn.execute("SELECT * FROM u")]
    for i in ids:
        conn.execute("SELECT * FROM v WHERE id = ?", (i,))
    return names, rows
PY
cat >quiet2/io.c <<'C'
#include <stdio.h>
#include <string.h>
void emit(FILE *f, const char **items, int n, int unbuffered, char *name)
{
	for (int i = 0; i < n; i++) {
		fputs(items[i], f);
		if (unbuffered)
			fflush(f);
		strcpy(name, items[i]);
		strcat(name, ".out");
	}
	for (int i = 0; i < n; i++) {
		fputs(items[i], f);
		fflush(f);
	}
}
C
cat >quiet2/timing.py <<'PY'
import time
import torch
def profile_layers(layers, batch):
    times = []
    for layer in layers:
        torch.cuda.synchronize()
        tick = time.time()
        out = layer(batch)
        out.sum().backward()
        torch.cuda.synchronize()
        times.append(time.time() - tick)
    return times
def place(model, devices):
    for name, module in model.named_children():
        module.to(devices[name])
PY
# torchvision's references: a print before exiting on a non-finite loss,
# a test loader of batch 1 (the per-image forward dwarfs the copy), and
# averaging checkpoints (each file loaded once) vs reloading the same one
cat >quiet2/train.py <<'PY'
import sys
import torch
from torch.utils.data import DataLoader
def train(model, data, opt, device):
    loader = DataLoader(data, batch_size=32, num_workers=4)
    test_loader = DataLoader(data, batch_size=1, num_workers=4)
    for x, y in loader:
        loss = model(x.cuda(non_blocking=True)).sum()
        if not torch.isfinite(loss):
            print(loss)
            sys.exit(1)
        loss.backward()
        opt.step()
    return test_loader
def average(paths):
    states = []
    for p in paths:
        with open(p, "rb") as f:
            states.append(torch.load(f))
    for p in paths:
        states.append(torch.load("base.pt"))
    return states
PY
run "$PERFLOOP" scan --format json quiet2
expect_rc 0
check out "sorted((f['path'].split('/')[-1], f['leaf'], f['location']['line']) for f in d['findings']) == [('db.py', 'PY009', 7), ('io.c', 'C008', 14), ('train.py', 'PY021', 21), ('train.py', 'PY037', 5)]"
# known-small loops, **kwargs, progress flushes, NaN guards and test code
# (#13's misfire classes, each beside the shape that must still be found):
# a nested loop over a pool of 4 or over n_splits blocks vs over items;
# DataLoader options in a local dict (resolved) vs a dict that lacks them
# vs one built elsewhere (not judged); a progress flush of stdout vs a
# data file; sorted()[0] once vs per item; a loss read for a NaN guard
# (quiet: the check needs the value every step); the same code in tests/
# (one level lower);
# a read once per epoch vs once per step under gradient accumulation
mkdir -p quiet3/tests
cat >quiet3/pairs.py <<'PY'
def mix_pool(entropy):
    pool = [0] * 4
    for i in range(len(pool)):
        for j in range(len(pool)):
            if i != j:
                pool[j] ^= hash(pool[i])
    return pool
def blocks(X, n_splits, out):
    for i in range(n_splits):
        for j in range(n_splits):
            out[i, j] = X[i].dot(X[j])
def dupes(items):
    for a in items:
        for b in items:
            if a == b and a is not b:
                return a
def leader(names, groups):
    first = sorted(names)[0]
    return first, [sorted(g)[0] for g in groups]
PY
cat >quiet3/loaders.py <<'PY'
import torch, torchvision
from torch.utils.data import DataLoader
def loaders(train, test, args, opts):
    kw = {"num_workers": args.workers, "pin_memory": True}
    kw.update({"batch_size": 32})
    a = DataLoader(train, shuffle=True, **kw)
    slim = dict(batch_size=64)
    b = DataLoader(torchvision.datasets.ImageFolder(test), **slim)
    c = DataLoader(test, **opts)
    return a.to("cuda"), b, c
class Arrays:
    def __init__(self, x, y):
        self.x, self.y = x, y
    def __len__(self):
        return len(self.x)
    def __getitem__(self, i):
        """one example"""
        return self.x[i], self.y[i]
class Files:
    def __getitem__(self, i):
        return load_image(self.paths[i])
def memory(x, y, paths):
    ds = Arrays(x, y)
    quick = DataLoader(ds, batch_size=64, pin_memory=True)
    slow = DataLoader(Files(paths), batch_size=64, pin_memory=True)
    return quick, slow
def peek(paths):
    probe = DataLoader(Files(paths), batch_size=8, pin_memory=True)
    first = next(iter(probe))
    again = next(iter(DataLoader(Files(paths), batch_size=8, pin_memory=True)))
    return first, again
PY
cat >quiet3/progress.c <<'C'
#include <stdio.h>
void run(FILE *log, int n)
{
	for (int i = 0; i < n; i++) {
		printf("\r%d/%d", i, n);
		fflush(stdout);
		fprintf(log, "%d\n", i);
		fflush(log);
	}
	for (int i = 0; i < 8; i++)
		fflush(log);
}
C
cat >quiet3/guard.py <<'PY'
import math
def train(model, loader, opt, device):
    for x, y in loader:
        loss = model(x.to(device), y.to(device))
        value = loss.item()
        if not math.isfinite(value):
            raise SystemExit(1)
        loss.backward()
        opt.step()
PY
# a metric read once per epoch, after the step loop ends (or before it
# starts) is the accepted place; one read per step under gradient
# accumulation (the micro-batch loop nested in the step) is not
cat >quiet3/epochs.py <<'PY'
import torch
def fit(model, loader, opt, device, epochs, accum):
    for epoch in range(epochs):
        print("start", model.w.item())
        total = torch.zeros((), device=device)
        for x, y in loader:
            loss = model(x.to(device), y.to(device))
            loss.backward()
            opt.step()
            total += loss.detach()
        print("epoch", epoch, total.item())
    for x, y in loader:
        for xs, ys in zip(x.chunk(accum), y.chunk(accum)):
            loss = model(xs.to(device), ys.to(device))
            loss.backward()
        opt.step()
        print(loss.item())
PY
cp quiet3/progress.c quiet3/tests/progress.c
run "$PERFLOOP" scan --format json quiet3
expect_rc 0
check out "sorted((f['path'].split('quiet3/')[-1], f['leaf'], f['location']['line'], f['severity']) for f in d['findings']) == [('epochs.py', 'PY010', 17, 'low'), ('loaders.py', 'PY014', 8, 'medium'), ('loaders.py', 'PY014', 25, 'medium'), ('pairs.py', 'PY001', 14, 'medium'), ('pairs.py', 'PY031', 19, 'low'), ('progress.c', 'C008', 8, 'medium'), ('tests/progress.c', 'C008', 8, 'low')]"
check out "[f['evidence'].get('severity_note') for f in d['findings'] if f['leaf'] == 'C008'] == [None, 'rated low, not medium: in test code']"
run "$PERFLOOP" scan quiet3/tests/progress.c
check_text() { grep -q "$1" "$T/out" || fail "text output lacks '$1'"; }
check_text "= note: rated low, not medium: in test code"
# PY015 (advisory: asked for by its id) reads pin_memory through **kw too
run "$PERFLOOP" scan --select PY015 --format json quiet3/loaders.py
expect_rc 0
check out "[(f['leaf'], f['location']['line']) for f in d['findings']] == [('PY015', 8)]"
# evidence, not text (#39): a loop-carried regrowth whose result the loop
# never reads (outputs = torch.cat([outputs, model(x)]), a model in the
# loop or not) vs generation's ids fed back to the model and a loop over
# two items; "mps" inside json.dumps names no device; a sync in a helper
# that the step loop calls on every step vs only every N steps; a
# TensorDataset elsewhere in the function silences no other loader; a
# sleep or a request in __getitem__ vs a file read there (lazy loading);
# a **kwargs dict that sets num_workers in one branch of an if-else; an
# evaluation loader beside a pinned training one (PY015 quiet, PY014 one
# level lower); a sync under `if i == 0:` (runs once); nested loops over
# one collection that compare its elements (medium) but not those that
# build all pairs (a table: nothing to index) or sit in the outer loop's
# else (once); list(d) copies
# in a loop that changes d (needed: none) or not (low); num_workers set
# through kwargs.update(a dict held in a name)
mkdir -p quiet4
cat >quiet4/grow.py <<'PY'
import torch
def predict(model, loader):
    outputs = torch.empty(0)
    for x, _ in loader:
        outputs = torch.cat([outputs, model(x)])
    return outputs
def generate(model, ids, steps):
    for _ in range(steps):
        logits = model(ids)
        ids = torch.cat([ids, logits.argmax(-1, keepdim=True)], dim=-1)
    return ids
def rows(items):
    acc = []
    for r in items:
        acc = acc + [r * 2]
    return acc
def pair(a, b):
    out = []
    for x in (a, b):
        out = out + [x]
    return out
PY
cat >quiet4/cpu.py <<'PY'
import json
def train(model, loader, opt):
    for x, y in loader:
        loss = model(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(json.dumps({"loss": loss.item()}))
PY
cat >quiet4/helper.py <<'PY'
import torch
def log(loss):
    print("loss", loss.item())
def every(loss):
    print(loss.item())
def train(model, loader, opt, device):
    for step, (x, y) in enumerate(loader):
        loss = model(x.to(device)).sum()
        loss.backward()
        opt.step()
        log(loss)
        if step % 100 == 0:
            every(loss)
PY
cat >quiet4/tds.py <<'PY'
from torchvision.datasets import ImageFolder
from torch.utils.data import DataLoader, TensorDataset
def loaders(x, y, files):
    small = DataLoader(TensorDataset(x, y), batch_size=32)
    ds = TensorDataset(x, y)
    other = DataLoader(ds, batch_size=32)
    disk = DataLoader(ImageFolder(files), batch_size=32)
    return small, other, disk
PY
cat >quiet4/items.py <<'PY'
import time
import requests
from PIL import Image
from torch.utils.data import Dataset
class Remote(Dataset):
    def __getitem__(self, i):
        time.sleep(0.003)
        return requests.get(self.urls[i]).content
class Lazy(Dataset):
    def __getitem__(self, i):
        return Image.open(self.paths[i])
PY
cat >quiet4/kw.py <<'PY'
from torchvision.datasets import ImageFolder
import torch
from torch.utils.data import DataLoader
def main(train_set):
    kwargs = {'num_workers': 1, 'pin_memory': True} if torch.cuda.is_available() else {}
    return DataLoader(train_set, batch_size=64, shuffle=True, **kwargs)
def other(train_dir):
    kw = {'batch_size': 8} if train_dir else {}
    return DataLoader(ImageFolder(train_dir), **kw)
PY
cat >quiet4/evl.py <<'PY'
from torchvision.datasets import ImageFolder
import torch
from torch.utils.data import DataLoader
def loaders(tr, te):
    train_loader = DataLoader(ImageFolder(tr), batch_size=64, num_workers=4, pin_memory=True)
    val_loader = DataLoader(ImageFolder(te), batch_size=256, num_workers=4)
    test_loader = DataLoader(ImageFolder(te), batch_size=256)
    return train_loader, val_loader, test_loader
def train(model, loader, opt, device):
    for i, (x, y) in enumerate(loader):
        loss = model(x.to(device)).sum()
        loss.backward()
        opt.step()
        if i == 0:
            print(loss.item())
PY
cat >quiet4/pairs.py <<'PY'
def dupes(items):
    for a in items:
        for b in items:
            if a == b and a is not b:
                return a
def table(items, f):
    out = {}
    for a in items:
        for b in items:
            out[a, b] = f(a, b)
    return out
def first_free(items, used):
    for a in items:
        if a in used:
            break
    else:
        for b in items:
            used.add(b)
def prune(d):
    for k in list(d):
        if d[k] is None:
            d.pop(k)
def total(prices):
    s = 0
    for p in list(prices):
        s += p
    return s
PY
cat >quiet4/upd.py <<'PY'
from torch.utils.data import DataLoader
def loaders(ds, use_cuda):
    kw = {"batch_size": 64}
    if use_cuda:
        cuda_kw = {"num_workers": 2, "pin_memory": True}
        kw.update(cuda_kw)
    return DataLoader(ds, **kw)
PY
run "$PERFLOOP" scan --format json quiet4
expect_rc 0
check out "sorted((f['path'].split('quiet4/')[-1], f['leaf'], f['location']['line'], f['severity']) for f in d['findings']) == [('evl.py', 'PY014', 7, 'low'), ('grow.py', 'PY004', 5, 'medium'), ('grow.py', 'PY004', 15, 'medium'), ('helper.py', 'PY010', 3, 'low'), ('items.py', 'PY036', 7, 'medium'), ('items.py', 'PY036', 8, 'medium'), ('kw.py', 'PY014', 9, 'medium'), ('pairs.py', 'PY001', 3, 'medium'), ('pairs.py', 'PY028', 25, 'low'), ('tds.py', 'PY014', 7, 'medium')]"

# what a loader's dataset costs per item, read from the code (#39; on
# held-out training code most PY014/PY015 findings were loaders over
# torchvision's in-memory MNIST/CIFAR read with ToTensor only): in memory
# and no augmentation, a class that computes its items, a dataset not shown
# (a parameter): quiet; files read per item (ImageFolder, a class whose
# __getitem__ opens an image through a helper, a builder given a path in
# image code, also unpacked from it, a Subset of a folder), a random crop, a resize, a collate_fn
# that tokenizes: PY014. PY015 (advisory) only where items are large
# (images from files, a resize to 224), PY037 where the copies are
# non_blocking; a network moved once per pass over the networks (PY020
# quiet); retain_graph before a second backward (PY032 quiet); tensors
# built on the CPU and copied to the device in the step or in forward()
# (PY038), not where made with device=, outside the step, every 100
# steps, or from the batch's own data; a read in a step function (its
# backward() in no loop of its own) that a loop calls (PY010); layers
# built in forward() (PY039; not those that hold no weights); a position
# index through unsqueeze and a numpy mask copied in forward() (PY038);
# numpy noise and labels wrapped in torch.cuda.FloatTensor each step
# (PY040), not where the tensor type is the CPU's or outside the step;
# a label made with torch.ones(n) and copied with .cuda() lines later
# (PY038), not where made with device=; PyTorch 0.3's loss.data[0] (PY010);
# legacy Variable(torch.ones(n)).cuda() and .type(torch.cuda.FloatTensor)
# (PY038), not a dtype's .type(torch.float16) nor the batch's own copy;
# no PY010 for reading a tensor the code made on the host (torch.ones(n).cpu())
mkdir quiet5
cat >quiet5/data.py <<'PY'
import torch
from torch.utils.data import DataLoader, Dataset, Subset
from torchvision import datasets, transforms
from PIL import Image
device = torch.device("cuda")
train_tf = transforms.Compose([transforms.RandomCrop(32, padding=4), transforms.ToTensor()])
big_tf = transforms.Compose([transforms.Resize(224), transforms.ToTensor()])
class Photos(Dataset):
    def __getitem__(self, i):
        return self.load(self.paths[i]), self.labels[i]
    def load(self, path):
        return Image.open(path).convert("RGB")
class Sums(Dataset):
    def __getitem__(self, i):
        a, b = divmod(i, 100)
        return torch.tensor([a, b]), torch.tensor(a + b)
def collate(batch):
    texts, labels = zip(*batch)
    ids = [tokenizer(t) for t in texts]
    return torch.tensor(ids), torch.tensor(labels)
def loaders(args, data, texts):
    mnist = DataLoader(datasets.MNIST("data", train=True, transform=transforms.ToTensor()), batch_size=64)
    cifar = DataLoader(datasets.CIFAR10("data", train=True, transform=train_tf), batch_size=128)
    folder = DataLoader(datasets.ImageFolder(args.traindir, big_tf), batch_size=32)
    photos = DataLoader(Photos(), batch_size=32)
    sums = DataLoader(Sums(), batch_size=32)
    given = DataLoader(data, batch_size=32)
    built = DataLoader(get_dataset(args.data_path, "train"), batch_size=32)
    resized = DataLoader(datasets.FashionMNIST("data", transform=big_tf), batch_size=32)
    tokens = DataLoader(texts, batch_size=32, collate_fn=collate)
    part = DataLoader(Subset(datasets.ImageFolder(args.traindir), range(100)), batch_size=32)
    split, classes = get_dataset(args.data_path, "train")
    unpacked = DataLoader(split, batch_size=32)
    return mnist, cifar, folder, photos, sums, given, built, resized, tokens, part, unpacked
PY
cat >quiet5/rnn.py <<'PY'
import numpy as np
import torch
from torch import nn
class RNN(nn.Module):
    def forward(self, x):
        h0 = torch.zeros(self.num_layers, x.size(0), self.hidden).to(x.device)
        c0 = torch.zeros(self.num_layers, x.size(0), self.hidden, device=x.device)
        out, _ = self.lstm(x, (h0, c0))
        return out
    def init(self):
        return torch.zeros(3).cuda()
def train(model, loader, opt, device):
    eye = torch.eye(4).to(device)
    for i, (x, y) in enumerate(loader):
        valid = torch.ones(x.size(0), 1).to(device)
        z = torch.from_numpy(np.random.normal(0, 1, (x.size(0), 100))).to(device)
        scale = torch.tensor([0.5, 2.0]).to(device)
        target = torch.tensor(y).to(device)
        loss = model(x.to(device), valid, z, scale, target, eye)
        loss.backward()
        opt.step()
        if i % 100 == 0:
            sample = torch.randn(16, 100).to(device)
PY
cat >quiet5/step.py <<'PY'
import torch
def train(model, x, y, opt):
    opt.zero_grad()
    loss = model(x.cuda(), y.cuda())
    loss.backward()
    opt.step()
    return loss.item()
def fit(model, x, y, opt, epochs):
    for epoch in range(epochs):
        print(train(model, x, y, opt))
        seed = torch.empty(0).cuda()
def evaluate(model, x):
    return model(x).sum().item()
PY
cat >quiet5/fwd.py <<'PY'
import torch
from torch import nn
import torch.nn.functional as F
class Net(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)
    def forward(self, x):
        y = nn.Linear(x.size(-1), 10)(x)
        z = nn.MaxPool2d(2)(y)
        w = F.max_pool2d(y, 2)
        return nn.LayerNorm(10)(z + w)
def build():
    return nn.Linear(3, 3)
PY
cat >quiet5/group.py <<'PY'
import torch
def train(model, loader, opt, device):
    for x, y in loader:
        loss = model(x.to(device), y.to(device))
        loss.backward()
        opt.step()
        a = loss.item()
        b = loss.detach().cpu()
PY
cat >quiet5/gan2.py <<'PY'
import numpy as np
import torch
from torch import nn
cuda = torch.cuda.is_available()
Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
class Attn(nn.Module):
    def forward(self, x):
        pos = torch.arange(x.size(1)).unsqueeze(0).to(x.device)
        mask = torch.from_numpy(np.triu(np.ones((4, 4)), k=1)).cuda()
        return x + pos + mask
def train(G, D, loader, opt, latent_dim):
    for imgs, _ in loader:
        z = Tensor(np.random.normal(0, 1, (imgs.shape[0], latent_dim)))
        valid = Tensor(np.ones((imgs.shape[0], 1)))
        fake = Tensor(imgs.size(0), 1).fill_(0.0)
        loss = D(G(z)).mean()
        loss.backward()
        opt.step()
z0 = Tensor(np.random.normal(0, 1, (10, 100)))
PY
cat >quiet5/cpugan.py <<'PY'
import numpy as np
import torch
Tensor = torch.FloatTensor
def train(G, D, loader, opt):
    for imgs, _ in loader:
        z = Tensor(np.random.normal(0, 1, (imgs.shape[0], 100)))
        loss = D(G(z)).mean()
        loss.backward()
        opt.step()
PY
cat >quiet5/late.py <<'PY'
import torch
def train(G, D, loader, opt, device):
    for x, _ in loader:
        y_real = torch.ones(x.size(0))
        y_fake = torch.zeros(x.size(0), device=device)
        y_real = y_real.cuda()
        y_fake = y_fake.cuda()
        loss = D(G(x.cuda())).mean() + y_real.sum() + y_fake.sum()
        loss.backward()
        opt.step()
        print(loss.data[0])
PY
cat >quiet5/legacy.py <<'PY'
import torch
from torch.autograd import Variable
def train(G, D, loader, opt, bs):
    for x, _ in loader:
        real_label = Variable(torch.ones(bs)).cuda()
        nxt = torch.zeros(bs).type(torch.cuda.FloatTensor)
        half = torch.zeros(bs).type(torch.float16)
        loss = D(G(Variable(x).cuda())).mean() + real_label.sum() + nxt.sum() + half.sum()
        loss.backward()
        opt.step()
PY
cat >quiet5/hostmade.py <<'PY'
import torch
def plot(viz, it, loc, conf):
    return torch.ones((1, 3)).cpu() * it, torch.Tensor([loc, conf]).unsqueeze(0).cpu()
def train(model, loader, opt, device):
    for i, (x, y) in enumerate(loader):
        loss = model(x.to(device), y.to(device))
        loss.backward()
        opt.step()
        marks = torch.zeros(3)
        print(marks.numpy(), torch.ones(2).cpu())
        print(loss.item())
PY
cat >quiet5/gan.py <<'PY'
import torch
def setup(self, device):
    for name in self.model_names:
        net = getattr(self, "net" + name)
        net.to(device)
    for net in self.nets:
        net.cuda()
def train(model, loader, opt_d, opt_g, device):
    for x, y in loader:
        model.to(device)
        d_loss = model.d(x.to(device))
        g_loss = model.g(x.to(device)) - d_loss
        d_loss.backward(retain_graph=True)
        g_loss.backward()
        opt_d.step()
        opt_g.step()
def fit(model, loader, opt):
    for x, y in loader:
        loss = model(x, y)
        loss.backward(retain_graph=True)
        opt.step()
PY
cat >quiet5/copies.py <<'PY'
import torch
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
def train(model, opt):
    loader = DataLoader(datasets.CIFAR10("data", transform=transforms.ToTensor()), batch_size=128, num_workers=4)
    for x, y in loader:
        loss = model(x.cuda(non_blocking=True), y.cuda(non_blocking=True))
        loss.backward()
        opt.step()
PY
run "$PERFLOOP" scan --format json quiet5
expect_rc 0
check out "sorted((f['path'].split('quiet5/')[-1], f['leaf'], f['location']['line']) for f in d['findings']) == [('copies.py', 'PY037', 5)] + [('data.py', 'PY014', n) for n in (23, 24, 25, 28, 29, 30, 31, 33)] + [('fwd.py', 'PY039', n) for n in (9, 12)] + [('gan.py', 'PY020', 10), ('gan.py', 'PY032', 20), ('gan2.py', 'PY038', 8), ('gan2.py', 'PY038', 9), ('gan2.py', 'PY040', 13), ('gan2.py', 'PY040', 14), ('group.py', 'PY010', 7), ('hostmade.py', 'PY010', 11), ('late.py', 'PY010', 11), ('late.py', 'PY038', 6), ('legacy.py', 'PY038', 5), ('legacy.py', 'PY038', 6)] + [('rnn.py', 'PY038', n) for n in (6, 15, 16, 17)] + [('step.py', 'PY010', 7)]"
# one step's syncs are one finding, which names the others' lines
check out "[f['location'].get('also_lines') for f in d['findings'] if f['path'].endswith('group.py')] == [[8]]"
run "$PERFLOOP" scan --select PY015 --format json quiet5
expect_rc 0
check out "sorted((f['path'].split('quiet5/')[-1], f['location']['line']) for f in d['findings']) == [('data.py', n) for n in (24, 25, 28, 29, 31, 33)]"

# torch under its import alias (PY038, PY027); a step function that steps
# an optimizer is a step wherever it is called from, one finding for its
# syncs (PY010), but not a function whose backward() is in a nested def;
# .item() per evaluation batch (PY041) but not in training, not per
# sample, not on a loader's batch still on the host, not float(loss) in a
# loop that copies its batch with a blocking copy (it waits anyway); a
# model in eval() mode run per batch with autograd on (PY017), not for
# export; LongTensor(range(n)), torch.arange(0, n) (a start, where
# torch.empty(0) holds nothing) and .to(device=...) copies (PY038);
# float(loss) per training step (PY010);
# not an action a CPU environment's step takes (also once clipped into
# another name), nor logging after a PPO
# iteration's update epochs; a minibatch's .item() is per step (PY010);
# no PY014 for a dataset module's __main__ demo, but for a script whose
# __main__ block trains; PY025 per detection, not per epoch, per batch or
# every N steps; Lightning's training_step is a step (PY010); a rollout
# loop is per step (PY038) and what its env.step returned is host memory;
# no PY019 in a file that does not train; a comment after a loop's colon
# is not its header (no PY041 for `for _ in range(10):`)
mkdir -p quiet6
cat >quiet6/alias.py <<'PY'
import torch as th
class Net(th.nn.Module):
    def forward(self, x):
        return x + th.zeros(4).cuda()
def train(model, loader, opt):
    for x, y in loader:
        loss = model(x.cuda()).sum()
        loss.backward()
        opt.step()
        idx = th.LongTensor(range(x.size(0))).cuda()
        th.cuda.synchronize()
        pos = th.arange(0, x.size(0)).long().cuda()
        none = th.empty(0).cuda()
        scale = th.ones(1).to(device=x.device)
PY
cat >quiet6/notorch.py <<'PY'
import numpy as th
def train(model, loader, opt):
    for x, y in loader:
        loss = model(x.cuda()).sum()
        loss.backward()
        opt.step()
        m = th.zeros(4).cuda()
PY
cat >quiet6/engine.py <<'PY'
class Engine:
    def forward_backward(self, data):
        imgs, pids = data
        loss = self.criterion(self.model(imgs.cuda()), pids.cuda())
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.scheduler.step()
        return {"loss": loss.item(), "acc": self.acc(imgs).item()}
    def train_one_epoch(self, loader):
        for data in loader:
            def closure():
                loss = self.model(data.cuda()).sum()
                loss.backward()
                self.optimizer.step()
                return loss
            closure()
        return self.meter.avg.item()
PY
cat >quiet6/evals.py <<'PY'
import torch
def evaluate(model, val_loader, device):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for x, y, sizes in val_loader:
            n = sizes[0].item()
            out = model(x.to(device, non_blocking=True))
            total += torch.nn.functional.cross_entropy(out, y.to(device, non_blocking=True)).item()
            correct = (out.argmax(1) == y.to(device, non_blocking=True)).sum().item()
            for b in range(out.size(0)):
                print(out[b].max().item())
            sizes = sizes.to(device, non_blocking=True)
            print(sizes[0].item())
    return total
@torch.no_grad()
def estimate_loss(model, get_batch, eval_iters):
    losses = torch.zeros(eval_iters)
    for k in range(eval_iters):
        logits, loss = model(*get_batch("val"))
        losses[k] = loss.item()
    return losses.mean()
def fit(model, train_loader, opt):
    for x, y in train_loader:
        loss = model(x.cuda(), y.cuda())
        loss.backward()
        opt.step()
def summarize(results):
    for r in results:
        print(r.item())
def test(net, test_loader):
    net.eval()
    total = 0.0
    for data, target in test_loader:
        # every evaluation batch
        output = net(data.cuda())
        loss = torch.nn.functional.cross_entropy(output, target.cuda())
        total += float(loss)
    return total
def export(net, loader):
    net.eval()
    for x, _ in loader:
        torch.jit.trace(net, x)
        break
def fit2(net, train_loader, opt):
    for x, y in train_loader:
        loss = net(x.cuda(), y.cuda())
        loss.backward()
        opt.step()
        print(float(loss))
PY
cat >quiet6/rl.py <<'PY'
import torch
def train(agent, envs, opt, device, args):
    next_obs = torch.Tensor(envs.reset()).to(device)
    for iteration in range(args.num_iterations):
        for step in range(args.num_steps):
            action = agent.act(next_obs)
            next_obs, reward, done, info = envs.step(action.cpu().numpy())
            next_obs = torch.Tensor(next_obs).to(device)
        for epoch in range(args.update_epochs):
            for start in range(0, args.batch_size, args.minibatch_size):
                loss = agent.loss(start)
                opt.zero_grad()
                loss.backward()
                opt.step()
                clipfrac = agent.clip(start).float().mean().item()
        print("value loss", loss.item())
def dqn(q, env, opt, device, steps):
    obs = env.reset()
    for global_step in range(steps):
        actions = torch.argmax(q(torch.Tensor(obs).to(device)), dim=1).cpu().numpy()
        obs, rewards, dones, infos = env.step(actions)
        loss = q.td_loss(obs, rewards)
        opt.zero_grad()
        loss.backward()
        opt.step()
def rollout(policy, env, opt, device, n, low, high):
    obs = env.reset()
    for step in range(n):
        actions = policy(torch.Tensor(obs).to(device)).cpu().numpy()
        clipped = np.clip(actions, low, high)
        obs, rewards, dones, infos = env.step(clipped)
        loss = policy.loss(obs)
        opt.zero_grad()
        loss.backward()
        opt.step()
PY
cat >quiet6/demo.py <<'PY'
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
def folder(root):
    return datasets.ImageFolder(root, transforms.RandomCrop(224))
if __name__ == "__main__":
    loader = DataLoader(folder("data"), batch_size=4)
    for imgs, labels in loader:
        print(imgs.shape)
        break
PY
cat >quiet6/mainloop.py <<'PY'
import torch
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
if __name__ == "__main__":
    model = torch.nn.Linear(10, 2).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(datasets.ImageFolder("data", transforms.RandomCrop(224)), batch_size=64)
    for x, y in loader:
        loss = model(x.cuda()).sum()
        loss.backward()
        opt.step()
PY
cat >quiet6/lit.py <<'PY'
import torch
class Model:
    def training_step(self, batch, batch_idx):
        loss = self.net(batch.to(self.device)).sum()
        self.log("loss", loss.item())
        return loss
def rollout(policy, envs, device, steps):
    obs = envs.reset()
    for step in range(steps):
        act = policy(torch.Tensor(obs).to(device))
        obs, reward, done, info = envs.step(act.cpu().numpy())
        frames = obs[:, 3].reshape(-1).tolist()
        noise = torch.rand(4).to(device)
def evaluate(model, loader):
    model.eval()
    for _ in range(10):
        # fetch the next evaluation batch
        x = next(loader)
        print(model(x.cuda()).sum().item())
PY
cat >quiet6/infer.py <<'PY'
import torch
from torch import nn
def load(path):
    model = nn.DataParallel(build())
    model.load_state_dict(torch.load(path))
    return model
PY
cat >quiet6/logs.py <<'PY'
def run(model, loader, epochs, val_interval, dets):
    for epoch in range(epochs):
        for i, batch in enumerate(loader):
            model.step(batch)
            if i % val_interval == 0:
                with open("log_train.txt", "a") as log:
                    log.write(str(i))
            with open("per_batch.txt", "a") as f:
                f.write("x")
        with open("result/train_loss.txt", "w") as f:
            f.write(str(epoch))
    for det in dets:
        for box in det:
            with open("labels.txt", "a") as f:
                f.write(str(box))
PY
run "$PERFLOOP" scan --format json quiet6
expect_rc 0
check out "sorted((f['path'].split('quiet6/')[-1], f['leaf'], f['location']['line']) for f in d['findings']) == [('alias.py', 'PY027', 11), ('alias.py', 'PY038', 4), ('alias.py', 'PY038', 10), ('alias.py', 'PY038', 12), ('alias.py', 'PY038', 14), ('engine.py', 'PY010', 9), ('evals.py', 'PY010', 50), ('evals.py', 'PY017', 36), ('lit.py', 'PY010', 5), ('lit.py', 'PY038', 13), ('logs.py', 'PY025', 14), ('mainloop.py', 'PY014', 7), ('rl.py', 'PY010', 15)]"
# PY041 is advisory: run by its id
run "$PERFLOOP" scan --format json --select PY041 quiet6
expect_rc 0
check out "sorted((f['path'].split('quiet6/')[-1], f['location']['line']) for f in d['findings']) == [('evals.py', 9), ('evals.py', 21)]"
check out "[f['location'].get('also_lines') for f in d['findings'] if f['leaf'] == 'PY041' and f['location']['line'] == 9] == [[10, 14]]"

# a function given device tensors copies what it made on the host to
# their device on every call (PY038): a timestep embedding's frequencies
# through torch.exp and a name, a table copied whole to index it, a
# sampling step's timestep tensor, a table its class built in __init__;
# not a batch moved to a tensor's device, not in __init__, not a table
# registered as a buffer. An EMA one parameter at a time (PY042), its
# source named target_params too, not a reinforcement-learning target
# network's soft update (a few tensors), not a hard copy, the fallback beside a foreach path,
# a sum of gradients, an optimizer's zip of three lists, nor a loop that
# writes from one variable only. A norm summed with .item() one parameter
# at a time (PY043), not under a periodic branch around its loop, not a
# print per parameter, not a loop over other tensors. A network run with
# autograd on for a value (PY044): an agent's action returned as numpy
# (through a method of the network too), a target network's forward in
# an update, once per function; not under no_grad (with or decorator),
# not a function whose output may feed a loss, not a non-network call.
# DataParallel asked for with several GPUs is rated low (PY019). A
# validation loop in the epoch loop that also trains is an evaluation
# loop (PY017, PY041)
mkdir -p quiet7
cat >quiet7/diffusion.py <<'PY'
import math
import numpy as np
import torch

def timestep_embedding(timesteps, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000) * torch.arange(0, half, dtype=torch.float32) / half)
    freqs = freqs.to(device=timesteps.device)
    return timesteps[:, None].float() * freqs[None]

def extract(arr, timesteps, shape):
    res = torch.from_numpy(arr).to(device=timesteps.device)[timesteps].float()
    return res.expand(shape)

def sample(model, x, seq):
    n = x.size(0)
    for i in reversed(seq):
        t = (torch.ones(n) * i).to(x.device)
        x = model(x, t)
    return x

def move(batch, ref):
    return batch.to(ref.device)

class Schedule:
    def __init__(self, n, x):
        self.betas = torch.linspace(1e-4, 0.02, n)
        self.kept = torch.zeros(3).to(x.device)
    def discretize(self, x, t):
        return self.betas.to(x.device)[t]

class Buffered(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("betas", torch.linspace(1e-4, 0.02, n))
    def discretize(self, x, t):
        return self.betas.to(x.device)[t]
PY
cat >quiet7/ema.py <<'PY'
import torch

def soft_update(target, source, tau):
    for t, p in zip(target.parameters(), source.parameters()):
        t.data.copy_(tau * p.data + (1 - tau) * t.data)

def hard_update(target, source):
    for t, p in zip(target.parameters(), source.parameters()):
        t.data.copy_(p.data)

class EMA:
    def update(self, module):
        for name, param in module.named_parameters():
            if param.requires_grad:
                self.shadow[name].mul_(self.mu).add_(param.data, alpha=1 - self.mu)

    def update_either(self, model, foreach):
        ema, src = list(self.module.parameters()), list(model.parameters())
        if foreach:
            torch._foreach_mul_(ema, self.mu)
            torch._foreach_add_(ema, src, alpha=1 - self.mu)
        else:
            for e, p in zip(ema, src):
                e.lerp_(p, 1 - self.mu)

def accumulate(grads, model):
    for g, p in zip(grads, model.parameters()):
        g.add_(p.grad)

def sgd(params, grads, bufs, lr):
    for p, g, b in zip(params, grads, bufs):
        b.mul_(0.9).add_(g)
        p.add_(b, alpha=-lr)

def halve(model):
    for name, p in model.named_parameters():
        p.data.mul_(0.5)

def update_ema(target_params, source_params, rate=0.99):
    for targ, src in zip(target_params, source_params):
        targ.detach().mul_(rate).add_(src, alpha=1 - rate)
PY
cat >quiet7/fit.py <<'PY'
import torch
def fit(model, train_loader, val_loader, opt, device, epochs):
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            loss = model(x.to(device, non_blocking=True), y.to(device, non_blocking=True))
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        total = 0.0
        for x, y in val_loader:
            out = model(x.to(device, non_blocking=True))
            total += torch.nn.functional.cross_entropy(out, y.to(device, non_blocking=True)).item()
        print(epoch, total)
PY
cat >quiet7/gradnorm.py <<'PY'
import torch
def log_norms(model, step, device):
    total = 0.0
    for p in model.parameters():
        total += p.grad.norm().item() ** 2
    if step % 100 == 0:
        norms = []
        for p in model.parameters():
            norms.append(p.grad.norm().item())
    for name, p in model.named_parameters():
        print(name, p.norm().item())
    for x in model.buffers_list:
        total += x.sum().item()
    return total
PY
cat >quiet7/agent.py <<'PY'
import torch
class Agent:
    def select_action(self, state):
        state = torch.FloatTensor(state.reshape(1, -1)).to(self.device)
        return self.actor(state).cpu().data.numpy().flatten()

    @torch.no_grad()
    def act(self, state):
        return self.actor(state).cpu().numpy()

    def get_action(self, state):
        return self.actor(state)

    def train(self, batch):
        s, a, r, s2, d = batch
        noise = torch.randn_like(a) * 0.2
        next_action = self.actor_target(s2) + noise
        target_q = self.critic_target(s2, next_action)
        target_q = r + d * 0.99 * target_q.detach()
        loss = ((self.critic(s, a) - target_q) ** 2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()

    def update(self, batch):
        s, a, r, s2, d = batch
        with torch.no_grad():
            target_q = r + 0.99 * self.q_target(s2).max(1)[0]
        loss = ((self.q(s).gather(1, a) - target_q) ** 2).mean()
        loss.backward()

    def build_targets(self, boxes):
        return self.target_transform(boxes)

    def choose_action(self, state):
        n = sum(p.numel() for p in self.actor.parameters())
        a, _ = self.policy.sample(state)
        return a.cpu().numpy()
PY
cat >quiet7/dp.py <<'PY'
import torch.nn as nn
import torch.optim as optim
def main(args, model):
    if args.use_multi_gpu and args.use_gpu:
        model = nn.DataParallel(model)
    opt = optim.SGD(model.parameters(), lr=0.1)
    if args.cuda:
        model = nn.DataParallel(model).cuda()
PY
run "$PERFLOOP" scan --format json quiet7
expect_rc 0
check out "[(f['location']['line'], f['severity']) for f in d['findings'] if f['leaf'] == 'PY019'] == [(5, 'low'), (8, 'medium')]"
check out "sorted((f['path'].split('quiet7/')[-1], f['leaf'], f['location']['line']) for f in d['findings']) == [('agent.py', 'PY044', 5), ('agent.py', 'PY044', 17), ('agent.py', 'PY044', 37), ('diffusion.py', 'PY038', 8), ('diffusion.py', 'PY038', 12), ('diffusion.py', 'PY038', 18), ('diffusion.py', 'PY038', 30), ('dp.py', 'PY019', 5), ('dp.py', 'PY019', 8), ('ema.py', 'PY042', 13), ('ema.py', 'PY042', 40), ('fit.py', 'PY017', 13), ('gradnorm.py', 'PY043', 5)]"
run "$PERFLOOP" scan --format json --select PY041 quiet7
expect_rc 0
check out "[(f['path'].split('quiet7/')[-1], f['location']['line']) for f in d['findings']] == [('fit.py', 14)]"

# what the quietings leave alone and what they quiet: a function
# decorated with @torch.no_grad() is not per call, its twin without the
# decorator is (PY038); a NaN-recovery branch in forward() (PY038 quiet);
# DataParallel as the fallback beside DistributedDataParallel (PY019
# quiet); a step that calls synchronize() in its own body (PY010 quiet,
# PY027 reports the synchronize), not one under a branch; an evaluation
# loop that reads its outputs with .cpu() anyway (PY041 quiet)
mkdir -p quiet8
cat >quiet8/nograd.py <<'PY'
import torch
@torch.no_grad()
def translate(nets, x_src):
    z = torch.randn(100, 16).to(x_src.device)
    return nets(x_src, z)
def translate_grad(nets, x_src):
    z = torch.randn(100, 16).to(x_src.device)
    return nets(x_src, z)
class Koopman(torch.nn.Module):
    def forward(self, x, K):
        if torch.isnan(K).any():
            K = torch.eye(K.size(-1)).to(x.device)
        return x @ K
PY
cat >quiet8/ddp.py <<'PY'
import torch
import torch.optim as optim
def main(args, model):
    if args.distributed:
        model = torch.nn.parallel.DistributedDataParallel(model)
    else:
        model = torch.nn.DataParallel(model).cuda()
    opt = optim.SGD(model.parameters(), lr=0.1)
PY
cat >quiet8/sync.py <<'PY'
import torch
def train(model, loader, opt, device, args):
    for x, y in loader:
        loss = model(x.to(device), y.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        print(loss.item())
def train2(model, loader, opt, device, args):
    for x, y in loader:
        loss = model(x.to(device), y.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if args.sync:
            torch.cuda.synchronize()
        print(loss.item())
def evaluate(model, val_loader, device):
    model.eval()
    preds = []
    with torch.no_grad():
        for x, y in val_loader:
            out = model(x.to(device, non_blocking=True))
            preds.append(out.argmax(1).cpu().numpy())
            print(out.sum().item())
    return preds
PY
run "$PERFLOOP" scan --format json --select PY,PY041 quiet8
expect_rc 0
check out "sorted((f['path'].split('quiet8/')[-1], f['leaf'], f['location']['line']) for f in d['findings']) == [('nograd.py', 'PY038', 7), ('sync.py', 'PY010', 18), ('sync.py', 'PY027', 8), ('sync.py', 'PY027', 17)]"

# a validation pass under an every-N-steps branch of the step loop (the
# innermost loop is the validation loop; the branch above it decides), and
# a branch on a name bound to such a condition (held-out 16: hifi-gan's
# validation, Real-Time-Voice-Cloning's `if epoch_eval or step_eval:`);
# beside them, a loop over the step's losses that runs on every step and
# a branch on a flag that says nothing of steps: still found
mkdir -p quiet9
cat >quiet9/val.py <<'PY'
import torch
def train(model, loader, val_loader, opt, device, hp):
    step = 0
    for x, y in loader:
        loss = model(x.to(device), y.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if step % hp.validation_interval == 0:
            with torch.no_grad():
                for vx, vy in val_loader:
                    err = model(vx.to(device), vy.to(device)).item()
        step_eval = hp.eval_every > 0 and step % hp.eval_every == 0
        if step_eval:
            print(model.sample().cpu().numpy())
def train2(model, loader, opt, device, verbose):
    for x, y in loader:
        losses = model(x.to(device), y.to(device))
        opt.zero_grad()
        sum(losses.values()).backward()
        opt.step()
        for k, v in losses.items():
            print(k, v.item())
def train3(model, loader, opt, device, verbose):
    for x, y in loader:
        loss = model(x.to(device), y.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        is_verbose = verbose and device.type == "cuda"
        if is_verbose:
            print(loss.item())
PY
run "$PERFLOOP" scan --format json quiet9
expect_rc 0
check out "sorted((f['leaf'], f['location']['line']) for f in d['findings'] if f['leaf'] == 'PY010') == [('PY010', 24), ('PY010', 33)]"

# held-out 17's misreads: a training loop whose backward() is a helper
# called without a dot (open_clip's backward(total_loss, scaler)) is a
# training loop, so the loop over its losses that logs is not an
# evaluation loop; a sleep in __getitem__'s except clause is a retry's
# back-off (Real-ESRGAN), the same sleep in its body is still found
mkdir -p quiet10
cat >quiet10/loop.py <<'PY'
import torch


def backward(total_loss, scaler):
    scaler.scale(total_loss).backward()


def train_one_epoch(model, data, opt, scaler, device, meters):
    model.train()
    for i, batch in enumerate(data):
        images = batch.to(device, non_blocking=True)
        losses = model(images)
        backward(sum(losses.values()), scaler)
        scaler.step(opt)
        for key, val in losses.items():
            meters[key].update(val.item())
PY
cat >quiet10/ds.py <<'PY'
import time
import torch


class Frames(torch.utils.data.Dataset):
    def __getitem__(self, i):
        while True:
            try:
                return self.client.get(self.paths[i])
            except IOError:
                time.sleep(1)


class Slow(torch.utils.data.Dataset):
    def __getitem__(self, i):
        time.sleep(0.01)
        return self.items[i]
PY
run "$PERFLOOP" scan --format json --select PY010,PY036,PY041 quiet10
expect_rc 0
check out "sorted((f['path'].split('quiet10/')[-1], f['leaf'], f['location']['line']) for f in d['findings'] if f['leaf'] in ('PY010', 'PY036', 'PY041')) == [('ds.py', 'PY036', 16), ('loop.py', 'PY010', 16)]"

# a sync in a helper of another file that the training step calls: the
# metric function of an imported module, a method of an imported class
# (a model's get_step() reading a GPU buffer), reported at the helper
# with where the step calls it, from a fresh scan and from the cache
# alike; not a helper called under a periodic branch, nor one that no
# step calls, nor a same-named function of a module the trainer does not
# import, nor a same-named method of a class it does not import; and
# the helper's file alone, with no caller, reports nothing
mkdir -p xfile
cat >xfile/train.py <<'PY'
import torch
from metrics import accuracy, grad_total
from model import Net


def train(model, loader, opt, device, args):
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        out = model(x)
        loss = torch.nn.functional.cross_entropy(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        acc = accuracy(out, y)
        n = model.get_step()
        if step % args.log_every == 0:
            print(grad_total(model))
PY
cat >xfile/metrics.py <<'PY'
import torch


def accuracy(out, y):
    return (out.argmax(1) == y).float().mean().item()


def grad_total(model):
    return sum(p.grad.norm() for p in model.parameters()).item()


def unused_helper(t):
    return t.cpu().numpy()
PY
cat >xfile/model.py <<'PY'
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("step", torch.zeros(1, device="cuda"))

    def get_step(self):
        return self.step.data.item()


class Other:
    def get_step(self):
        return self.count.item()
PY
cat >xfile/other.py <<'PY'
import torch


def accuracy(out, y):
    return (out.argmax(1) == y).float().mean().item()
PY
want="[('metrics.py', 5, 'return (out.argmax(1) == y).float().mean().item() (called on every training step: xfile/train.py:14)'), ('model.py', 10, 'return self.step.data.item() (called on every training step: xfile/train.py:15)')]"
for pass in fresh cached; do
	run "$PERFLOOP" scan --format json xfile
	expect_rc 0
	check out "sorted((f['path'].split('xfile/')[-1], f['location']['line'], f['evidence']['text']) for f in d['findings']) == $want"
done
grep -q "4 of 4 files unchanged" "$T/err" || fail "the second scan did not read the cache: $(cat "$T/err")"
run "$PERFLOOP" scan xfile
grep -q "= note: called on every training step: xfile/train.py:15" out || fail "no caller note: $(cat out)"
run "$PERFLOOP" scan --no-cache --format json xfile/metrics.py xfile/model.py
expect_rc 0
check out "d['findings'] == []"

# a helper whose call line is itself a finding of the rule (the step's
# print(host(loss).item())) is not reported again at the helper
mkdir -p xfile2
cat >xfile2/train.py <<'PY'
import torch
from helpers import host


def train(model, loader, opt, device):
    for x, y in loader:
        loss = model(x.to(device), y.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(host(loss).item())
PY
cat >xfile2/helpers.py <<'PY'
import torch


def host(t):
    return t.detach().cpu()
PY
run "$PERFLOOP" scan --no-cache --format json xfile2
expect_rc 0
check out "[(f['path'].split('xfile2/')[-1], f['location']['line']) for f in d['findings']] == [('train.py', 11)]"

# PY025: a path that is the same file each pass (a constant, or an
# f-string whose names the innermost loop does not bind: one image's
# labels file reopened per detection, yolov5, held-out 3), not an
# f-string that names a new file each pass (nerf_pl's f'depth_{i:03d}',
# held-out 19; a name the loop assigns, yolov5's per-image txt_path)
mkdir -p fopen
cat >fopen/save.py <<'PY'
def save_all(preds, dets):
    for i, p in enumerate(preds):
        with open(f"depth_{i:03d}", "wb") as f:
            f.write(p)
        txt = "labels_%d" % i
        with open(f"{txt}.txt", "a") as f:
            f.write("image")
        for box in dets:
            with open(f"{txt}.txt", "a") as f:
                f.write(box)
        with open("all.log", "a") as f:
            f.write("x")
PY
run "$PERFLOOP" scan --no-cache --format json fopen
expect_rc 0
check out "[f['location']['line'] for f in d['findings'] if f['leaf'] == 'PY025'] == [9, 11]"

# PY009: a query per item, not a retry loop's one request (it asks again
# only when a try failed: stylegan2-ada's download, held-out 19)
mkdir -p retry
cat >retry/fetch.py <<'PY'
def download(session, url, num_attempts=3):
    for attempts_left in reversed(range(num_attempts)):
        try:
            return session.get(url)
        except IOError:
            pass


def names(session, ids):
    return [session.get(i) for i in ids]


def rows(session, ids):
    out = []
    for i in ids:
        out.append(session.get(i))
    return out
PY
run "$PERFLOOP" scan --no-cache --format json retry
expect_rc 0
check out "[f['location']['line'] for f in d['findings'] if f['leaf'] == 'PY009'] == [10, 16]"

# PY043 in a helper module that names no device (guided-diffusion's
# fp16_util.py, held-out 18): its trainer runs it on the GPU every step
mkdir -p norms
cat >norms/fp16_util.py <<'PY'
import torch as th


class Trainer:
    def _compute_norms(self):
        grad_norm = 0.0
        for p in self.master_params:
            with th.no_grad():
                if p.grad is not None:
                    grad_norm += th.norm(p.grad, p=2).item() ** 2
        return grad_norm ** 0.5
PY
run "$PERFLOOP" scan --no-cache --format json norms
expect_rc 0
check out "[(f['leaf'], f['location']['line']) for f in d['findings']] == [('PY043', 10)]"

# docs/rules.md is generated from the rules and kept current
"$PERFLOOP" scan --list-rules --format md >rules.md
diff -u "$PERFLOOP_SRC/docs/rules.md" rules.md ||
	fail "docs/rules.md is stale: perfloop scan --list-rules --format md > docs/rules.md"
# at least the issue's counts
python3 -c 'import json,sys; r=json.load(open("rules.json")); sys.exit(0 if sum(x["language"]=="python" for x in r) >= 30 and sum(x["language"]=="c" for x in r) >= 10 else 1)' ||
	fail "fewer than 30 Python or 10 C rules"
