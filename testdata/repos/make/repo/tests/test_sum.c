#include "num.h"
#include "check.h"

int main(void) {
    CHECK(sum_to(1) == 1);
    CHECK(sum_to(4) == 10);
    return failures != 0;
}
