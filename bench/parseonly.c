/* The parser's floor for `perfloop scan` (bench/scan.sh): the same
 * tree-sitter library and Python grammar, each file read, parsed and its
 * tree walked once, nothing else. perfloop scan's CPU time over this
 * one's is what the rules, conditions and output cost.
 *     parseonly FILELIST   (one path per line) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

const TSLanguage *tree_sitter_python(void);

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: parseonly FILELIST\n");
		return 2;
	}
	FILE *list = fopen(argv[1], "r");
	if (!list) {
		perror(argv[1]);
		return 2;
	}
	TSParser *p = ts_parser_new();
	ts_parser_set_language(p, tree_sitter_python());
	char path[4096];
	unsigned long files = 0, nodes = 0;
	while (fgets(path, sizeof path, list)) {
		path[strcspn(path, "\n")] = '\0';
		FILE *f = fopen(path, "rb");
		if (!f)
			continue;
		fseek(f, 0, SEEK_END);
		long len = ftell(f);
		fseek(f, 0, SEEK_SET);
		char *text = malloc(len > 0 ? (size_t)len : 1);
		if (!text || fread(text, 1, (size_t)len, f) != (size_t)len) {
			fclose(f);
			free(text);
			continue;
		}
		fclose(f);
		TSTree *t = ts_parser_parse_string(p, NULL, text, (uint32_t)len);
		TSTreeCursor c = ts_tree_cursor_new(ts_tree_root_node(t));
		for (;;) { /* preorder, every node once */
			nodes++;
			if (ts_tree_cursor_goto_first_child(&c))
				continue;
			while (!ts_tree_cursor_goto_next_sibling(&c))
				if (!ts_tree_cursor_goto_parent(&c))
					goto done;
		}
done:
		ts_tree_cursor_delete(&c);
		ts_tree_delete(t);
		free(text);
		files++;
	}
	fclose(list);
	ts_parser_delete(p);
	printf("%lu files, %lu nodes\n", files, nodes);
	return 0;
}
