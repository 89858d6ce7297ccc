/*
 * perfloop mcp's resources: the loop's documents in .perfloop/, its
 * ledger, the last profile's files and each tool's last document, listed
 * and read. Every file is reached through no symlink (mcp_open_in_root):
 * one that is a symlink is neither listed nor read.
 */
#include "mcp_int.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strbuf.h"

struct resource {
	char uri[160];
	char rel[PATH_MAX]; /* the file, under the root; "" for a document in memory */
	const char *mime;
};

/* Whether rel is a regular file under the root, reached through no
 * symlink (mcp_open_in_root): 0, or -1. */
static int readable(const struct server *S, const char *rel)
{
	struct stat st;
	int fd = mcp_open_in_root(S, rel, 0, &st);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* What uri names, if it is one of the loop's: 0, or -1. */
static int resource_of(struct server *S, const char *u, struct resource *r)
{
	snprintf(r->uri, sizeof r->uri, "%s", u);
	r->rel[0] = '\0';
	r->mime = "application/json";
	if (!strncmp(u, "perfloop://last/", 16)) {
		char name[64];
		const char *n = u + 16, *dot = strstr(n, ".json");
		if (!dot || dot[5] || dot - n >= (long)sizeof name)
			return -1;
		snprintf(name, sizeof name, "%.*s", (int)(dot - n), n);
		return json_object_get(S->last, name) ? 0 : -1;
	}
	if (!strcmp(u, "perfloop://profile/last.svg") || !strcmp(u, "perfloop://profile/last.folded") ||
	    !strcmp(u, "perfloop://profile/last.findings.json")) {
		const char *ext = u + strlen("perfloop://profile/last");
		snprintf(r->rel, sizeof r->rel, ".perfloop/mcp/profile%s", ext);
		r->mime = !strcmp(ext, ".svg")	    ? "image/svg+xml"
			  : !strcmp(ext, ".folded") ? "text/plain"
						    : "application/json";
		return readable(S, r->rel);
	}
	if (!strcmp(u, "perfloop://loop/ledger.jsonl")) {
		json_t *loop = mcp_load_file(S, ".perfloop/loop.json");
		const char *l = json_string_value(json_object_get(loop, "ledger"));
		size_t rn = strlen(S->root);
		if (l && l[0] == '/') /* absolute: only inside the root */
			l = !strncmp(l, S->root, rn) && l[rn] == '/' ? l + rn + 1 : NULL;
		int ok = l && strlen(l) < sizeof r->rel;
		if (ok)
			snprintf(r->rel, sizeof r->rel, "%s", l);
		json_decref(loop);
		r->mime = "application/x-ndjson";
		return ok ? readable(S, r->rel) : -1;
	}
	if (strncmp(u, "perfloop://loop/", 16))
		return -1;
	const char *n = u + 16;
	size_t len = strlen(n);
	if (!len || len > 100 || n[0] == '.' || len < 6 || strcmp(n + len - 5, ".json") ||
	    strspn(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != len)
		return -1;
	snprintf(r->rel, sizeof r->rel, ".perfloop/%s", n);
	return readable(S, r->rel);
}

json_t *mcp_resource_list(struct server *S)
{
	json_t *a = json_array();
	struct pl_strbuf names = {0};
	struct stat st;
	int fd = mcp_open_in_root(S, ".perfloop", 1, &st); /* not a symlinked one */
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (fd >= 0 && !d)
		close(fd);
	struct dirent *e;
	while (d && (e = readdir(d))) { /* the loop's documents and verdicts */
		size_t n = strlen(e->d_name);
		if (n > 5 && n <= 100 && e->d_name[0] != '.' && !strcmp(e->d_name + n - 5, ".json"))
			pl_strbuf_printf(&names, "perfloop://loop/%s\n", e->d_name);
	}
	if (d)
		closedir(d);
	pl_strbuf_puts(&names, "perfloop://loop/ledger.jsonl\nperfloop://profile/last.svg\n"
			       "perfloop://profile/last.folded\nperfloop://profile/last.findings.json\n");
	const char *k;
	json_t *v;
	json_object_foreach(S->last, k, v) pl_strbuf_printf(&names, "perfloop://last/%s.json\n", k);
	char *all = pl_strbuf_take(&names);
	for (char *line = all, *nl; line && (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		struct resource r;
		if (resource_of(S, line, &r) == 0) /* a symlink is not listed: never read */
			json_array_append_new(a, json_pack("{s:s, s:s, s:s}", "uri", r.uri, "name",
							   strrchr(r.uri, '/') + 1, "mimeType",
							   r.mime));
	}
	free(all);
	return a;
}

void mcp_resource_read(struct server *S, json_t *id, json_t *params)
{
	json_t *uri = json_object_get(params, "uri");
	struct resource r;
	if (!json_is_string(uri) || resource_of(S, json_string_value(uri), &r) < 0) {
		mcp_send_error(id, -32002, "resource not found");
		return;
	}
	char *text = NULL;
	if (!r.rel[0]) {
		const char *n = r.uri + 16;
		char name[64];
		snprintf(name, sizeof name, "%.*s", (int)(strstr(n, ".json") - n), n);
		text = json_dumps(json_object_get(S->last, name), JSON_INDENT(1));
	} else if (!(text = mcp_read_in_root(S, r.rel, NULL))) {
		mcp_send_error(id, -32002, "resource not found (or over 32 MiB)");
		return;
	} else {
		mcp_utf8_clean(text);
	}
	mcp_send_result(id, json_pack("{s:[{s:s, s:s, s:s}]}", "contents", "uri", r.uri, "mimeType",
				      r.mime, "text", text ? text : ""));
	free(text);
}
