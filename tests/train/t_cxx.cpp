// t_cxx: C++ throw/catch through several frames (with destructors running
// during unwinding and a rethrow), virtual calls, templates, std::sort with a
// comparator.
#include "gt.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

static volatile int sink;

struct Guard {
	int id;
	GT_FN explicit Guard(int i) : id(i)
	{
		GT_ENTER();
		sink = id;
	}
	GT_FN ~Guard()
	{
		GT_ENTER();
		sink = -id;
	}
};

struct Failure : std::runtime_error {
	int depth;
	GT_FN Failure(int d) : std::runtime_error("failure"), depth(d)
	{
		GT_ENTER();
	}
};

// Throws from the bottom of a recursion; every level owns a Guard.
GT_FN static int thrower(int depth)
{
	GT_ENTER();
	Guard g(depth);
	if (depth == 0)
		throw Failure(sink);
	return thrower(depth - 1) + 1;
}

GT_FN static int middle(int depth)
{
	GT_ENTER();
	try {
		return thrower(depth);
	} catch (const Failure &f) {
		sink = f.depth;
		throw;   // rethrow through more frames
	}
}

GT_FN static int catcher(int depth)
{
	GT_ENTER();
	try {
		return middle(depth);
	} catch (const std::exception &e) {
		return 100 + (int)(e.what()[0] == 'f');
	}
}

GT_FN static int after_catch(int n)
{
	GT_ENTER();
	return n <= 0 ? 0 : after_catch(n - 1) + n;
}

// Virtual dispatch.
struct Shape {
	GT_FN virtual ~Shape() {}
	virtual long area() const = 0;
};
struct Square : Shape {
	long s;
	explicit Square(long v) : s(v) {}
	GT_FN long area() const override
	{
		GT_ENTER();
		return s * s;
	}
};
struct Rect : Shape {
	long w, h;
	Rect(long a, long b) : w(a), h(b) {}
	GT_FN long area() const override
	{
		GT_ENTER();
		return w * h;
	}
};

GT_FN static long total_area(const std::vector<Shape *> &v)
{
	GT_ENTER();
	long t = 0;
	for (const Shape *s : v)
		t += s->area();
	return t;
}

// Templates: a compile-time recursion, each level its own function.
template <int N> GT_FN int tdepth(int x)
{
	GT_ENTER();
	return tdepth<N - 1>(x + N) + 1;
}
template <> GT_FN int tdepth<0>(int x)
{
	GT_ENTER();
	return x;
}

GT_FN static bool by_last_digit(int a, int b)
{
	GT_ENTER();
	return a % 10 != b % 10 ? a % 10 < b % 10 : a < b;
}

GT_FN static long sort_some()
{
	GT_ENTER();
	std::vector<int> v;
	unsigned s = 99;
	for (int i = 0; i < 50; i++) {
		s = s * 1103515245 + 12345;
		v.push_back((int)(s >> 16) % 1000);
	}
	std::sort(v.begin(), v.end(), by_last_digit);
	long h = 0;
	for (int x : v)
		h = h * 31 + x;
	return h;
}

GT_FN int main()
{
	GT_ENTER();
	printf("catch %d\n", catcher(6));
	printf("catch %d\n", catcher(2));
	printf("after %d\n", after_catch(5));
	Square sq(7);
	Rect r(3, 4);
	std::vector<Shape *> v{&sq, &r, &sq};
	printf("area %ld\n", total_area(v));
	printf("tdepth %d\n", tdepth<6>(1));
	printf("sort %ld\n", sort_some());
	return 0;
}
