// SPDX-License-Identifier: LGPL-2.1-or-later
// A C++ workload whose hot function is a method of a class template in a namespace, so its symbol is
// mangled (_ZN11vprof_names7SpinnerIiE4spinEi) and the profile must show it demangled.
#include "workload-util.h"

namespace vprof_names {

template <typename T> class Spinner {
public:
        __attribute__((noinline)) T spin(int rounds);

private:
        volatile T acc_ = 0;
};

template <typename T> T Spinner<T>::spin(int rounds)
{
        for (int i = 0; i < rounds; i++)
                acc_ = acc_ + (T)i;
        return acc_;
}

} // namespace vprof_names

int main(int argc, char **argv)
{
        double seconds = workload_start(argc, argv), end = workload_now() + seconds;
        vprof_names::Spinner<int> s;

        while (workload_now() < end)
                s.spin(1000000);
        return 0;
}
