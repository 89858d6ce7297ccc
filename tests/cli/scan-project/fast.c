#include <string.h>

int count_spaces(const char *s)
{
	int n = 0;
	for (size_t i = 0; i < strlen(s); i++)
		n += s[i] == ' ';
	return n;
}
