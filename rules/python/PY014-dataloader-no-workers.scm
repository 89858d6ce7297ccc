; id: PY014
; title: DataLoader without worker processes (num_workers missing or 0)
; level: 5
; severity: medium
; status: requires_profiling
; metric: data_loading_share
; when: call-args-lack /num_workers["']?[[:space:]]*[=:][[:space:]]*([^0[:space:]]|0[0-9.xX])/, costly-dataset, not-read-once, node-lacks /batch_size[[:space:]]*=[[:space:]]*1[^0-9.]/, file-lacks /(^|[[:space:]])(import|from)[[:space:]]+(unittest|pytest)[^[:alnum:]_]/, not-demo-main
; lower: eval-loader
; lower-why: an evaluation loader (bound to a name for a test, val or eval split) runs once an epoch, without backward: its loading is not what the training step waits for
; rationale: With num_workers=0 batches are loaded and transformed in the training process, between steps: the accelerator idles while Python decodes data.
; fix: set num_workers (start with the number of CPU cores per GPU) and persistent_workers=True; measure the data-loading share before and after
; quiet: a loader whose dataset shows no work per item: torchvision's MNIST, CIFAR and the like (held in memory as one tensor) with no augmentation in their transform, a TensorDataset, a class of this file that only indexes its own arrays or does no I/O, a dataset the code does not show (a parameter, an attribute); reported where it shows work: files read per item (an ImageFolder, a class whose __getitem__ opens or decodes, a builder given a path), a random augmentation or resize in its transform, tokenizing, or a collate_fn of this file; num_workers set to anything but 0, also through a `**kwargs` dict the function builds; a `**kwargs` or `*args` it cannot resolve (not judged); a TensorDataset (the loader's own dataset, passed directly or through a name bound in the function: another TensorDataset elsewhere in the function no longer silences it) or a dataset class of the same file whose __getitem__ only returns self.x[i] (in memory: workers would only add copying), a loader read for one batch (`next(iter(loader))`), batch_size=1 loaders, unit tests; a loader in the `if __name__ == "__main__":` block of a file that neither runs a backward pass nor names an optimizer (a dataset module's demo)
; bad:
;| from torch.utils.data import DataLoader
;| from torchvision import datasets
;| dataset = datasets.ImageFolder("data/train", transform=train_transform)
;| loader = DataLoader(dataset, batch_size=64, shuffle=True)
; good:
;| from torch.utils.data import DataLoader
;| loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=8, persistent_workers=True)
;| from torchvision import datasets, transforms
;| mnist = datasets.MNIST("data", train=True, transform=transforms.ToTensor())
;| loader = DataLoader(mnist, batch_size=64)  # in memory, ToTensor only
;| loader_kwargs = {"num_workers": 4, "pin_memory": True}
;| val_loader = DataLoader(val_set, batch_size=64, **loader_kwargs)
;| from torch.utils.data import TensorDataset
;| def fit(x, y):
;|     ds = TensorDataset(x, y)  # already in memory: workers would only add IPC
;|     return DataLoader(ds, batch_size=64, shuffle=True)
((call function: [(identifier) @f (attribute attribute: (identifier) @f)]) @finding
 (#eq? @f "DataLoader"))
