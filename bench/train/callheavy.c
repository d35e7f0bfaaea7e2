/* callheavy: a call-intensive C workload for the training benchmark.  Each
 * function counts its own calls so per-call costs can be computed exactly. */
#include <stdio.h>
#include <stdlib.h>

static unsigned long calls;

struct node {
	long key;
	struct node *left, *right;
};

__attribute__((noinline)) static struct node *insert(struct node *t, long key)
{
	calls++;
	if (!t) {
		t = calloc(1, sizeof(*t));
		t->key = key;
		return t;
	}
	if (key < t->key)
		t->left = insert(t->left, key);
	else
		t->right = insert(t->right, key);
	return t;
}

__attribute__((noinline)) static long sum(const struct node *t)
{
	calls++;
	return t ? t->key + sum(t->left) + sum(t->right) : 0;
}

__attribute__((noinline)) static long fib(long n)
{
	calls++;
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) static long mix(long a, long b)
{
	calls++;
	return (a * 31) ^ (b + 7);
}

__attribute__((noinline)) static long step(long i)
{
	calls++;
	return mix(i, i >> 3) + mix(i >> 1, i);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1;
	struct node *t = NULL;
	unsigned long x = 88172645463325252ull;
	for (long i = 0; i < 20000 * n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		t = insert(t, (long)(x % 1000003));
	}
	long acc = sum(t) + fib(24 + (n > 1)) ;
	for (long i = 0; i < 1000000 * n; i++)
		acc += step(i);
	printf("%ld\n", acc);
	fprintf(stderr, "calls %lu\n", calls);
	return 0;
}
