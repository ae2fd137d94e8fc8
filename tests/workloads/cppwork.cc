// SPDX-License-Identifier: MIT
/*
 * A C++ workload: nearly all time goes to a method of a class in a
 * namespace, whose mangled name (_ZN7cppwork6Burner4spinEm) must be shown
 * demangled as cppwork::Burner::spin(unsigned long).
 *
 * usage: cppwork [ROUNDS]   (default 2000)
 */
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace cppwork {

class Burner {
public:
	__attribute__((noinline)) void spin(unsigned long seed);
	unsigned long total() const { return acc_; }

private:
	volatile unsigned long acc_ = 0;
};

void Burner::spin(unsigned long seed)
{
	unsigned long x = seed;
	for (unsigned i = 0; i < 1000000u; i++)
		x = x * 6364136223846793005ul + i;
	acc_ += x;
}

} // namespace cppwork

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? std::atol(argv[1]) : 2000;
	cppwork::Burner b;
	for (long r = 0; r < rounds; r++)
		b.spin(static_cast<unsigned long>(r));
	std::printf("cppwork: pid %d done (%lu)\n", static_cast<int>(getpid()), b.total());
	return 0;
}
