/* wordfreq: the bundled example icpp trains.  Counts the words and numbers of
 * its input with a small hash table and a recursive merge sort.  As in real
 * programs, helpers are reached along several call paths: read_word and
 * read_number have frames of the same size, so next_char and count_token
 * below them sit at the same stack height on two paths (ambiguous CIDs),
 * while the recursion of merge_sort gives every depth its own height. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

struct word {
	char *text;
	unsigned count;
	struct word *next;
};

#define BUCKETS 4096
static struct word *table[BUCKETS];
static size_t nwords;

static unsigned hash(const char *s)
{
	unsigned h = 2166136261u;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);
	if (!p) {
		perror("wordfreq");
		exit(1);
	}
	return p;
}

static char *copy(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xmalloc(n), s, n);
}

NOINLINE static void count_word(const char *s)
{
	unsigned b = hash(s) % BUCKETS;
	for (struct word *w = table[b]; w; w = w->next)
		if (!strcmp(w->text, s)) {
			w->count++;
			return;
		}
	struct word *w = xmalloc(sizeof(*w));
	w->text = copy(s);
	w->count = 1;
	w->next = table[b];
	table[b] = w;
	nwords++;
}

static int before(const struct word *a, const struct word *b)
{
	return a->count != b->count ? a->count > b->count : strcmp(a->text, b->text) < 0;
}

NOINLINE static void merge_sort(struct word **v, struct word **tmp, size_t n)
{
	if (n < 2)
		return;
	size_t h = n / 2, i = 0, j = h, k = 0;
	merge_sort(v, tmp, h);
	merge_sort(v + h, tmp, n - h);
	while (i < h && j < n)
		tmp[k++] = before(v[j], v[i]) ? v[j++] : v[i++];
	while (i < h)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	memcpy(v, tmp, n * sizeof(*v));
}

NOINLINE static int next_char(FILE *f)
{
	return fgetc(f);
}

NOINLINE static void count_token(char *buf, size_t n)
{
	buf[n] = 0;
	count_word(buf);
}

/* Reads one token of characters accepted by `accept`, starting with c. */
NOINLINE static int read_word(FILE *f, int c)
{
	char buf[256];
	size_t n = 0;
	for (; c != EOF && isalpha(c); c = next_char(f))
		if (n < sizeof(buf) - 1)
			buf[n++] = (char)tolower(c);
	count_token(buf, n);
	return c;
}

NOINLINE static int read_number(FILE *f, int c)
{
	char buf[256];
	size_t n = 0;
	for (; c != EOF && isdigit(c); c = next_char(f))
		if (n < sizeof(buf) - 1)
			buf[n++] = (char)c;
	count_token(buf, n);
	return c;
}

static void read_words(FILE *f)
{
	int c = next_char(f);
	while (c != EOF) {
		if (isalpha(c))
			c = read_word(f, c);
		else if (isdigit(c))
			c = read_number(f, c);
		else
			c = next_char(f);
	}
}

int main(int argc, char **argv)
{
	FILE *f = argc > 1 ? fopen(argv[1], "r") : stdin;
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	read_words(f);
	struct word **v = xmalloc((nwords + 1) * sizeof(*v)), **tmp = xmalloc((nwords + 1) * sizeof(*v));
	size_t k = 0;
	for (size_t b = 0; b < BUCKETS; b++)
		for (struct word *w = table[b]; w; w = w->next)
			v[k++] = w;
	merge_sort(v, tmp, k);
	for (size_t i = 0; i < k && i < 10; i++)
		printf("%7u %s\n", v[i]->count, v[i]->text);
	return 0;
}
