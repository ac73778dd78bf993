#pragma once
#include <cstdio>

// CHECK records a failed expectation; a test's main returns failures().
static int failed_checks = 0;
#define CHECK(cond)                                                     \
    do {                                                                \
        if (!(cond)) {                                                  \
            std::printf("%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
            failed_checks++;                                            \
        }                                                               \
    } while (0)
static int failures() { return failed_checks == 0 ? 0 : 1; }
