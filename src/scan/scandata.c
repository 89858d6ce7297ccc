/*
 * What a DataLoader's dataset costs per item, from the code (scan_int.h:
 * pl_scan_dataset_evidence). PY014 (no workers) and PY015 (no pinned
 * memory) are true only where loading an item does work or an item is
 * large: on real training code most of their false findings were
 * torchvision's MNIST and CIFAR, which hold the data in memory as one
 * tensor, read with ToTensor only (tests/scan-real/README.md, held-out 3).
 * Nothing here runs the code: what is not shown is not assumed.
 */
#include "scan_int.h"

#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <tree_sitter/api.h>

#include "strbuf.h"

struct last_assign {
	struct src *s;
	const char *name;
	size_t len;
	uint32_t before; /* only assignments that end before this byte (0: any) */
	TSNode found;
};

/* the value of the last `name = value` (found); of `name, other = f(...)`
 * the call (a builder that returns the dataset with its class count, a
 * random_split) */
static int last_assign_visit(TSNode n, void *arg)
{
	struct last_assign *f = arg;
	if (f->before && ts_node_start_byte(n) >= f->before)
		return 1;
	/* (the assignment a finding is in is not before it) */
	if (!node_is(n, "assignment") || (f->before && ts_node_end_byte(n) > f->before))
		return 0;
	TSNode left = ts_node_child_by_field_name(n, "left", 4);
	TSNode right = ts_node_child_by_field_name(n, "right", 5);
	size_t len;
	const char *t = pl_scan_ntext(f->s, left, &len);
	if (len == f->len && !memcmp(t, f->name, len)) {
		f->found = right;
	} else if ((node_is(left, "pattern_list") || node_is(left, "tuple_pattern")) &&
		   node_is(right, "call")) {
		uint32_t k = ts_node_named_child_count(left);
		for (uint32_t i = 0; i < k; i++) {
			t = pl_scan_ntext(f->s, ts_node_named_child(left, i), &len);
			if (len == f->len && !memcmp(t, f->name, len))
				f->found = right;
		}
	}
	return 0;
}

/* self.x[i], or a tuple of such: what an in-memory dataset returns */
static int indexes_self(struct src *s, TSNode e)
{
	if (node_is(e, "tuple") || node_is(e, "expression_list")) {
		uint32_t k = ts_node_named_child_count(e);
		for (uint32_t i = 0; i < k; i++)
			if (!indexes_self(s, ts_node_named_child(e, i)))
				return 0;
		return k > 0;
	}
	if (!node_is(e, "subscript"))
		return 0;
	TSNode v = ts_node_child_by_field_name(e, "value", 5);
	size_t len;
	const char *t = node_is(v, "attribute") ? pl_scan_ntext(s, v, &len) : NULL;
	return t && len > 5 && !memcmp(t, "self.", 5);
}


/* A class or function defined in this file by that name (null: none). */
struct def_find {
	struct src *s;
	const char *type, *name;
	size_t len;
	TSNode found;
};

static int def_visit(TSNode n, void *arg)
{
	struct def_find *f = arg;
	if (!node_is(n, f->type))
		return 0;
	size_t len;
	const char *t = pl_scan_ntext(f->s, ts_node_child_by_field_name(n, "name", 4), &len);
	if (len != f->len || memcmp(t, f->name, len))
		return 0;
	f->found = n;
	return 1;
}

static TSNode defined(struct src *s, const char *type, TSNode name)
{
	struct def_find f = {.s = s, .type = type};
	if (!node_is(name, "identifier"))
		return (TSNode){0};
	f.name = pl_scan_ntext(s, name, &f.len);
	walk_named(s->root, def_visit, &f);
	return f.found;
}

/* The value last assigned to the name in the function around at, else in
 * the file (null: none, a parameter, a tuple unpacked). */
TSNode pl_scan_last_assigned(struct src *s, TSNode scope, TSNode name, uint32_t before)
{
	struct last_assign af = {.s = s, .before = before};
	af.name = pl_scan_ntext(s, name, &af.len);
	walk_named(scope, last_assign_visit, &af);
	return af.found;
}

static TSNode assigned(struct src *s, TSNode at, TSNode name)
{
	TSNode scope = name_scope(s, at);
	TSNode v = pl_scan_last_assigned(s, scope, name, 0);
	if (ts_node_is_null(v) && !ts_node_eq(scope, s->root))
		v = pl_scan_last_assigned(s, s->root, name, 0);
	return v;
}

/* A method of a class body by name (null: none). */
static TSNode method(TSNode cls, struct src *s, const char *name)
{
	TSNode body = ts_node_child_by_field_name(cls, "body", 4);
	uint32_t nb = ts_node_is_null(body) ? 0 : ts_node_named_child_count(body);
	for (uint32_t i = 0; i < nb; i++) {
		TSNode d = ts_node_named_child(body, i);
		if (node_is(d, "decorated_definition"))
			d = ts_node_child_by_field_name(d, "definition", 10);
		if (!node_is(d, "function_definition"))
			continue;
		size_t len;
		const char *t = pl_scan_ntext(s, ts_node_child_by_field_name(d, "name", 4), &len);
		if (len == strlen(name) && !memcmp(t, name, len))
			return d;
	}
	return (TSNode){0};
}

/* a keyword argument's value, or the positional argument at pos (-1: none) */
static TSNode argument(struct src *s, TSNode call, const char *kw, int pos)
{
	TSNode args = ts_node_child_by_field_name(call, "arguments", 9);
	uint32_t k = ts_node_is_null(args) ? 0 : ts_node_named_child_count(args);
	for (uint32_t i = 0; i < k; i++) {
		TSNode a = ts_node_named_child(args, i);
		if (node_is(a, "keyword_argument")) {
			size_t len;
			const char *t =
			    pl_scan_ntext(s, ts_node_child_by_field_name(a, "name", 4), &len);
			if (len == strlen(kw) && !memcmp(t, kw, len))
				return ts_node_child_by_field_name(a, "value", 5);
		} else if ((int)i == pos) {
			return a;
		}
	}
	return (TSNode){0};
}

int pl_scan_in_list(const char *t, size_t len, const char *const *list)
{
	for (; *list; list++)
		if (strlen(*list) == len && !memcmp(*list, t, len))
			return 1;
	return 0;
}

/* torchvision's and torchaudio's datasets by what an item costs */
static const char *const memory_classes[] = {
    "TensorDataset", "MNIST", "FashionMNIST", "KMNIST",	  "EMNIST", "QMNIST", "CIFAR10",
    "CIFAR100",	     "SVHN",  "USPS",	      "FakeData", "SEMEION", "STL10",  NULL};
static const char *const image_file_classes[] = {
    "ImageFolder", "DatasetFolder", "ImageNet",	     "CocoDetection", "CocoCaptions",
    "VOCDetection", "VOCSegmentation", "Cityscapes", "SBDataset",    "Kinetics",
    "Kinetics400",  "UCF101",	       "HMDB51",     "LSUN",	     "LSUNClass",
    "CelebA",	    "Places365",       "Flowers102", "Food101",	     "StanfordCars",
    "OxfordIIITPet", "Caltech101",     "Caltech256", "DTD",	     "FGVCAircraft",
    "Country211",   "SUN397",	       "INaturalist", "WIDERFace",   "LFWPeople",
    "LFWPairs",	    "Omniglot",	       "Kitti",	     "EuroSAT",	     "GTSRB",
    "PCAM",	    "Imagenette",      NULL};
static const char *const audio_file_classes[] = {
    "LIBRISPEECH", "SPEECHCOMMANDS", "LJSPEECH", "VCTK_092",  "YESNO",	   "COMMONVOICE",
    "GTZAN",	   "LIBRITTS",	     "TEDLIUM",	 "CMUARCTIC", "LibriMix", NULL};

enum { RE_IO, RE_IMAGE, RE_WORK, RE_AUGMENT, RE_RESIZE, RE_PATH, RE_VISION, RE_COUNT };

static const regex_t *res(void)
{
	static regex_t re[RE_COUNT];
	static int state; /* 0 not compiled, 1 compiled, -1 failed */
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static const char *const src[RE_COUNT] = {
	    /* a file read or decoded */
	    "(^|[^A-Za-z0-9_.])open[[:space:]]*\\(|Image\\.open|imread|imdecode|read_image|"
	    "decode_(image|jpeg|png)|torchaudio\\.load|librosa\\.load|soundfile\\.read|"
	    "sf\\.read|wavfile\\.read|np\\.load|numpy\\.load|fromfile|torch\\.load|"
	    "pd\\.read_|read_csv|h5py|loadmat|nib\\.load|cv2\\.|pil_loader|default_loader|"
	    "accimage|\\.read\\(|(load|read|decode)_?(image|img|audio|wav|file|video|frame)",
	    /* ... an image */
	    "Image\\.open|imread|imdecode|read_image|decode_(image|jpeg|png)|cv2\\.|"
	    "pil_loader|default_loader|accimage|(load|read|decode)_?(image|img|video|frame)",
	    /* CPU work per item that is not a read */
	    "[Tt]okeni[sz]e|tokenizer|\\.encode\\(|spacy|nltk",
	    /* a per-item augmentation (torchvision, albumentations, the
	     * references' presets) */
	    "Random[A-Z]|ColorJitter|AutoAugment|RandAugment|TrivialAugment|AugMix|"
	    "GaussianBlur|RandomErasing|albumentations|A\\.Compose|Preset[A-Za-z]*Train|"
	    "PresetTrain",
	    /* a resize, and its first size where it is a literal */
	    "(Resize|ResizedCrop|CenterCrop)[A-Za-z]*[[:space:]]*\\([[:space:]]*(size[[:space:]]*="
	    "[[:space:]]*)?\\(?[[:space:]]*([0-9]*)",
	    /* a name for a place on disk */
	    "(path|dir|root|folder|file)s?$",
	    /* image code */
	    "torchvision|PIL|cv2|skimage|imageio",
	};
	pthread_mutex_lock(&mu);
	for (int i = 0; state == 0 && i < RE_COUNT; i++)
		if (regcomp(&re[i], src[i],
			    REG_EXTENDED | (i == RE_PATH ? REG_ICASE | REG_NOSUB : 0) |
				(i == RE_RESIZE ? 0 : REG_NOSUB)) != 0) {
			for (int k = 0; k < i; k++)
				regfree(&re[k]);
			state = -1;
		}
	if (state == 0)
		state = 1;
	pthread_mutex_unlock(&mu);
	return state > 0 ? re : NULL;
}

static int hit(const regex_t *re, const char *t, size_t len)
{
	return re && re_hit(re, t, len);
}

/* A resize to 128 pixels or more written as a number: 2; to a size named,
 * not written (args.size, crop_size): 1; none, or only smaller: 0. */
static int big_resize(const regex_t *re, const char *t, size_t len)
{
	size_t at = 0;
	int named = 0;
	while (at < len) {
		regmatch_t m[4] = {{.rm_so = (regoff_t)at, .rm_eo = (regoff_t)len}};
		if (regexec(re, t, 4, m, REG_STARTEND) != 0)
			break;
		if (m[3].rm_so < 0 || m[3].rm_eo == m[3].rm_so)
			named = 1;
		else if (atoi(t + m[3].rm_so) >= 128)
			return 2;
		at = (size_t)m[0].rm_eo > at ? (size_t)m[0].rm_eo : at + 1;
	}
	return named;
}

/* The text a dataset call's transform can be read from: its arguments,
 * each name among them as last assigned, and the body of a function of
 * this file that one of them calls (get_transform(train=True)). */
static void transform_text(struct src *s, TSNode call, struct pl_strbuf *b)
{
	TSNode args = ts_node_child_by_field_name(call, "arguments", 9);
	if (ts_node_is_null(args))
		return;
	size_t len;
	const char *t = pl_scan_ntext(s, args, &len);
	pl_strbuf_append(b, t, len);
	uint32_t k = ts_node_named_child_count(args);
	for (uint32_t i = 0; i < k; i++) {
		TSNode a = ts_node_named_child(args, i);
		if (node_is(a, "keyword_argument"))
			a = ts_node_child_by_field_name(a, "value", 5);
		if (node_is(a, "identifier")) {
			TSNode v = assigned(s, call, a);
			if (ts_node_is_null(v))
				continue;
			a = v;
			t = pl_scan_ntext(s, a, &len);
			pl_strbuf_puts(b, "\n");
			pl_strbuf_append(b, t, len);
		}
		if (node_is(a, "call")) {
			TSNode fn = defined(s, "function_definition",
					    ts_node_child_by_field_name(a, "function", 8));
			if (!ts_node_is_null(fn)) {
				t = pl_scan_ntext(s, fn, &len);
				pl_strbuf_puts(b, "\n");
				pl_strbuf_append(b, t, len);
			}
		}
	}
}

/* __getitem__ of a class and the methods of the class it calls on self
 * (one level: self._load_image(i)), as text. */
static void getitem_text(struct src *s, TSNode cls, struct pl_strbuf *b)
{
	TSNode gi = method(cls, s, "__getitem__");
	if (ts_node_is_null(gi))
		return;
	size_t len;
	const char *t = pl_scan_ntext(s, gi, &len);
	pl_strbuf_append(b, t, len);
	for (size_t i = 0; i + 5 < len; i++) {
		if (memcmp(t + i, "self.", 5) || (i && (t[i - 1] == '_' || t[i - 1] == '.')))
			continue;
		size_t j = i + 5;
		while (j < len && (t[j] == '_' || (t[j] >= 'a' && t[j] <= 'z') ||
				   (t[j] >= 'A' && t[j] <= 'Z') || (t[j] >= '0' && t[j] <= '9')))
			j++;
		if (j >= len || t[j] != '(' || j - i - 5 >= 64)
			continue;
		char name[64];
		memcpy(name, t + i + 5, j - i - 5);
		name[j - i - 5] = '\0';
		TSNode m = strcmp(name, "__getitem__") ? method(cls, s, name) : (TSNode){0};
		if (!ts_node_is_null(m)) {
			size_t ml;
			const char *mt = pl_scan_ntext(s, m, &ml);
			pl_strbuf_puts(b, "\n");
			pl_strbuf_append(b, mt, ml);
		}
	}
}

/* A class of this file that returns only self.x[i] from a __getitem__ of a
 * docstring and one return: its data is in memory. */
static int indexes_only(struct src *s, TSNode cls)
{
	TSNode gi = method(cls, s, "__getitem__");
	TSNode fb = ts_node_child_by_field_name(gi, "body", 4);
	uint32_t ns = ts_node_is_null(fb) ? 0 : ts_node_named_child_count(fb);
	TSNode last = ns ? ts_node_named_child(fb, ns - 1) : (TSNode){0};
	if (ns > 2 ||
	    (ns == 2 && !node_is(ts_node_named_child(ts_node_named_child(fb, 0), 0), "string")))
		return 0;
	return node_is(last, "return_statement") && indexes_self(s, ts_node_named_child(last, 0));
}

/* The dataset expression's evidence (depth: wrappers followed). */
static int dataset_flags(struct src *s, TSNode at, TSNode ds, int depth)
{
	const regex_t *re = res();
	if (!re || depth > 3)
		return 0;
	if (node_is(ds, "identifier")) /* ds = Cls(...) in the function or the file */
		ds = assigned(s, at, ds);
	if (!node_is(ds, "call"))
		return 0;
	TSNode fn = last_name(ts_node_child_by_field_name(ds, "function", 8));
	if (!node_is(fn, "identifier"))
		return 0;
	size_t len;
	const char *name = pl_scan_ntext(s, fn, &len);
	/* wrappers: their dataset decides */
	if ((len == 6 && !memcmp(name, "Subset", 6)) ||
	    (len == 12 && !memcmp(name, "random_split", 12)) ||
	    (len == 13 && !memcmp(name, "ConcatDataset", 13))) {
		TSNode inner = argument(s, ds, "dataset", 0);
		if (node_is(inner, "list") && ts_node_named_child_count(inner))
			inner = ts_node_named_child(inner, 0);
		return dataset_flags(s, ds, inner, depth + 1);
	}
	int flags = 0;
	struct pl_strbuf tb = {0};
	transform_text(s, ds, &tb);
	if (tb.s && hit(&re[RE_AUGMENT], tb.s, tb.len))
		flags |= PL_DS_AUGMENT;
	/* a resize to 224 is work on any image, and makes it large; one to a
	 * size the code names is read below by what is resized */
	int resize = tb.s ? big_resize(&re[RE_RESIZE], tb.s, tb.len) : 0;
	if (resize == 2)
		flags |= PL_DS_AUGMENT | PL_DS_BIG;
	TSNode cls = defined(s, "class_definition", fn);
	if (pl_scan_in_list(name, len, memory_classes)) {
		flags |= PL_DS_MEMORY;
	} else if (pl_scan_in_list(name, len, image_file_classes)) {
		flags |= PL_DS_FILES | PL_DS_BIG;
	} else if (pl_scan_in_list(name, len, audio_file_classes)) {
		flags |= PL_DS_FILES;
	} else if (!ts_node_is_null(cls)) {
		/* a class of this file: what its items cost, by its __getitem__,
		 * else by the dataset it extends */
		struct pl_strbuf gb = {0};
		getitem_text(s, cls, &gb);
		TSNode sup = ts_node_child_by_field_name(cls, "superclasses", 12);
		uint32_t ns = ts_node_is_null(sup) ? 0 : ts_node_named_child_count(sup);
		for (uint32_t i = 0; i < ns; i++) {
			TSNode sn = last_name(ts_node_named_child(sup, i));
			size_t sl;
			const char *st = node_is(sn, "identifier") ? pl_scan_ntext(s, sn, &sl) : NULL;
			if (st && pl_scan_in_list(st, sl, image_file_classes))
				flags |= PL_DS_FILES | PL_DS_BIG;
			else if (st && pl_scan_in_list(st, sl, memory_classes) && !gb.s)
				flags |= PL_DS_MEMORY;
		}
		if (!gb.s)
			; /* no __getitem__ of its own: its base's */
		else if (indexes_only(s, cls))
			flags = (flags & ~PL_DS_COSTLY) | PL_DS_MEMORY;
		else if (hit(&re[RE_IO], gb.s, gb.len))
			flags |= PL_DS_FILES | (hit(&re[RE_IMAGE], gb.s, gb.len) ? PL_DS_BIG : 0);
		if (gb.s && hit(&re[RE_WORK], gb.s, gb.len))
			flags |= PL_DS_AUGMENT;
		/* the transform it applies is its own, not the call's */
		if (gb.s && !(flags & PL_DS_AUGMENT)) {
			size_t cl;
			const char *ct = pl_scan_ntext(s, cls, &cl);
			if (hit(&re[RE_AUGMENT], ct, cl) && strstr(gb.s, "transform"))
				flags |= PL_DS_AUGMENT;
		}
		free(gb.s);
	} else {
		/* a builder from elsewhere: given a place on disk, it reads
		 * files; image code's files are images */
		TSNode args = ts_node_child_by_field_name(ds, "arguments", 9);
		uint32_t k = ts_node_is_null(args) ? 0 : ts_node_named_child_count(args);
		int path = 0;
		for (uint32_t i = 0; i < k && !path; i++) {
			TSNode a = ts_node_named_child(args, i);
			if (node_is(a, "keyword_argument")) {
				size_t kl;
				const char *kt = pl_scan_ntext(
				    s, ts_node_child_by_field_name(a, "name", 4), &kl);
				path = hit(&re[RE_PATH], kt, kl);
				a = ts_node_child_by_field_name(a, "value", 5);
			}
			TSNode n = last_name(a);
			size_t nl;
			const char *nt = node_is(n, "identifier") ? pl_scan_ntext(s, n, &nl) : NULL;
			path |= nt && hit(&re[RE_PATH], nt, nl);
			if (node_is(a, "string")) {
				nt = pl_scan_ntext(s, a, &nl);
				path |= memchr(nt, '/', nl) != NULL;
			}
		}
		if (path)
			flags |= PL_DS_FILES | (hit(&re[RE_VISION], s->text, s->len) ? PL_DS_BIG : 0);
	}
	free(tb.s);
	/* a resize to a named size: of images read from files, large ones
	 * (MNIST resized to opt.img_size is 28 pixels made 32) */
	if (resize == 1 && (flags & PL_DS_FILES) && !(flags & PL_DS_MEMORY))
		flags |= PL_DS_BIG;
	/* in memory, its items cost only what its transform does */
	if ((flags & PL_DS_MEMORY) && !(flags & PL_DS_AUGMENT))
		flags &= ~PL_DS_COSTLY;
	return flags;
}

int pl_scan_dataset_evidence(struct src *s, TSNode call)
{
	int flags = dataset_flags(s, call, argument(s, call, "dataset", 0), 0);
	/* a collate_fn of this file with work in it runs in the loading
	 * process for every batch (tokenizing, padding, building tensors) */
	TSNode cf = argument(s, call, "collate_fn", -1);
	TSNode fn = node_is(cf, "identifier") ? defined(s, "function_definition", cf) : (TSNode){0};
	TSNode body = ts_node_is_null(fn) ? fn : ts_node_child_by_field_name(fn, "body", 4);
	if (!ts_node_is_null(body)) {
		size_t len;
		const char *t = pl_scan_ntext(s, body, &len);
		const regex_t *re = res();
		if (ts_node_named_child_count(body) >= 3 || hit(re ? &re[RE_WORK] : NULL, t, len))
			flags |= PL_DS_COLLATE;
	}
	return flags;
}
