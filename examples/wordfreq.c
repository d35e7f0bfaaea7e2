/* wordfreq: the bundled example icpp trains.  Counts the words of its input
 * with a small hash table and a recursive merge sort: helpers reached along
 * several call paths, some at the same stack height (ambiguous CIDs) and some
 * not, as in real programs. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void count_word(const char *s)
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

static void merge_sort(struct word **v, struct word **tmp, size_t n)
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

static void read_words(FILE *f)
{
	char buf[256];
	size_t n = 0;
	int c;
	while ((c = fgetc(f)) != EOF) {
		if (isalnum(c) && n < sizeof(buf) - 1) {
			buf[n++] = (char)tolower(c);
		} else if (n) {
			buf[n] = 0;
			count_word(buf);
			n = 0;
		}
	}
	if (n) {
		buf[n] = 0;
		count_word(buf);
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
